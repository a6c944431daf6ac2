//! Cheap frames in memory, for an instruction count that load on a shared machine cannot skew
//! (issue 13 item 3): the `runtime-cheap-requests` workload of `benches/runtime.rs` run once.
//!
//! `cheap_frames limit|fast|full|none [N]` answers N `probe/x` requests (default 100 000) after
//! `initialize`: `limit` is one `serde_json` parse plus one compact write per line, `fast` is
//! `Runtime::handle_line`, `full` is `Runtime::handle_line_full` (the classifying path), `none`
//! only builds the lines. Run each under `valgrind --tool=callgrind`; a mode's count minus
//! `none`'s, over N, is its instructions per frame.

use dsh_conformance::runtime::{Config, Edition, Runtime};
use std::hint::black_box;

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let n: usize = args.next().map_or(100_000, |s| s.parse().expect("N"));
    let lines: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"probe/x"}}"#))
        .collect();
    let mut out = Vec::with_capacity(1 << 20);
    let mut rt = Runtime::new(Config::new(Edition::Current));
    rt.handle_line(INIT, 0, &mut out);
    let mut bytes = 0;
    for l in &lines {
        out.clear();
        match mode.as_str() {
            "limit" => {
                let v: serde_json::Value = serde_json::from_str(black_box(l)).expect("JSON");
                serde_json::to_writer(&mut out, &v).expect("write");
                out.push(b'\n');
            }
            "fast" => rt.handle_line(black_box(l), 0, &mut out),
            "full" => rt.handle_line_full(black_box(l), 0, &mut out),
            "none" => {
                black_box(l);
            }
            other => panic!("usage: cheap_frames limit|fast|full|none [N] (got {other:?})"),
        }
        bytes += out.len();
    }
    println!("{mode}: {n} lines, {bytes} bytes out");
}
