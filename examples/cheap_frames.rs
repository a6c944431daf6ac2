//! Cheap frames in memory, for an instruction count that load on a shared machine cannot skew
//! (issue 13 item 3): the `runtime-cheap-requests` workload of `benches/runtime.rs` run once.
//!
//! `cheap_frames limit|fast|full|none [N]` answers N `probe/x` requests (default 100 000) after
//! `initialize`: `limit` is one `serde_json` parse plus one compact write per line, `fast` is
//! `Runtime::handle_line`, `full` is `Runtime::handle_line_full` (the classifying path), `none`
//! only builds the lines. Run each under `valgrind --tool=callgrind`; a mode's count minus
//! `none`'s, over N, is its instructions per frame.
//!
//! `cheap_frames interleaved [N] [ROUNDS]` times the three modes in turns (N lines each, 200
//! rounds by default, the order rotating) and prints each one's rate from its total time, and
//! the ratios: a load that changes during the run slows all three alike.

use dsh_conformance::runtime::{Config, Edition, Runtime};
use std::hint::black_box;

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#;

fn lines(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"probe/x"}}"#))
        .collect()
}

fn runtime() -> Runtime {
    let mut rt = Runtime::new(Config::new(Edition::Current));
    rt.handle_line(INIT, 0, &mut Vec::new());
    rt
}

/// Answers `lines` in `mode`; returns the bytes written.
fn run(mode: &str, rt: &mut Runtime, lines: &[String], out: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for l in lines {
        out.clear();
        match mode {
            "limit" => {
                let v: serde_json::Value = serde_json::from_str(black_box(l)).expect("JSON");
                serde_json::to_writer(&mut *out, &v).expect("write");
                out.push(b'\n');
            }
            "fast" => rt.handle_line(black_box(l), 0, out),
            "full" => rt.handle_line_full(black_box(l), 0, out),
            "none" => {
                black_box(l);
            }
            other => {
                panic!("usage: cheap_frames limit|fast|full|none|interleaved [N] (got {other:?})")
            }
        }
        bytes += out.len();
    }
    bytes
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let n: usize = args.next().map_or(100_000, |s| s.parse().expect("N"));
    let mut out = Vec::with_capacity(1 << 20);
    let mut rt = runtime();
    if mode != "interleaved" {
        let bytes = run(&mode, &mut rt, &lines(n), &mut out);
        println!("{mode}: {n} lines, {bytes} bytes out");
        return;
    }
    let n = if n == 100_000 { 10_000 } else { n };
    let rounds: usize = args.next().map_or(200, |s| s.parse().expect("ROUNDS"));
    let lines = lines(n);
    let modes = ["limit", "fast", "full"];
    let mut total = [std::time::Duration::ZERO; 3];
    for r in 0..rounds {
        for k in 0..3 {
            let m = (r + k) % 3;
            let t0 = std::time::Instant::now();
            black_box(run(modes[m], &mut rt, &lines, &mut out));
            total[m] += t0.elapsed();
        }
    }
    let rate = |m: usize| (n * rounds) as f64 / total[m].as_secs_f64();
    for (m, name) in modes.iter().enumerate() {
        println!(
            "{name:>5}: {:>10.0} lines/s  ({:.2}× limit)",
            rate(m),
            rate(m) / rate(0)
        );
    }
}
