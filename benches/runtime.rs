//! The in-memory reference runtime (issue 6): cheap requests/s and echo prompts/s with the full
//! event stream, in virtual time (no pipes, no clocks: what the runtime itself costs).
//!
//! - `cheap`: `probe/x` requests after `initialize` (each answered with one error response) — the
//!   same workload as the stdio `cheap frames`; next to it, one `serde_json` parse plus one compact
//!   write per line, the least any JSON-RPC peer does per request (the limit); and the same
//!   requests through [`Runtime::handle_line_full`], the classifying path the fast one replaced.
//! - `echo`: `reply: ok` prompts round-robin over 100 sessions; virtual time jumps to each
//!   [`Runtime::next_deadline`] until no work is left, so every prompt's whole event stream
//!   (receipt, status, turn/start … assistant message … turn/end, idle) is produced.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dsh_conformance::runtime::{Config, Edition, Runtime};
use std::hint::black_box;

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#;
const T0: u64 = 1_800_000_000_000;

fn cheap_lines(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"probe/x"}}"#))
        .collect()
}

fn prompt_lines(n: usize, sessions: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"session/prompt","params":{{"sessionId":"load-{}","contentBlocks":[{{"type":"text","text":"reply: ok"}}]}}}}"#,
                i % sessions
            )
        })
        .collect()
}

fn fresh() -> (Runtime, Vec<u8>) {
    let mut rt = Runtime::new(Config::new(Edition::Current));
    let mut out = Vec::with_capacity(1 << 20);
    rt.handle_line(INIT, T0, &mut out);
    out.clear();
    (rt, out)
}

/// Feeds all prompts at one instant (as one pipe read would), then runs virtual time until idle.
/// Returns the number of `turn/end` events written.
fn run_echo(lines: &[String], out: &mut Vec<u8>) -> usize {
    let (mut rt, _) = fresh();
    let mut now = T0;
    let mut ends = 0;
    let mut count = |out: &mut Vec<u8>| {
        ends += memchr::memmem::find_iter(out, b"\"type\":\"turn/end\"").count();
        out.clear();
    };
    for l in lines {
        rt.handle_line(l, now, out);
    }
    count(out);
    while let Some(due) = rt.next_deadline() {
        now = now.max(due);
        rt.poll(now, out);
        count(out);
    }
    ends
}

fn bench(c: &mut Criterion) {
    let n = 10_000;
    let cheap = cheap_lines(n);
    let mut g = c.benchmark_group("runtime-cheap-requests");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("limit: serde_json parse + compact write", |b| {
        let mut out = Vec::with_capacity(1 << 20);
        b.iter(|| {
            out.clear();
            for l in &cheap {
                let v: serde_json::Value = serde_json::from_str(black_box(l)).unwrap();
                serde_json::to_writer(&mut out, &v).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    g.bench_function("Runtime::handle_line probe/x", |b| {
        let (mut rt, mut out) = fresh();
        b.iter(|| {
            out.clear();
            for l in &cheap {
                rt.handle_line(black_box(l), T0, &mut out);
            }
            black_box(out.len())
        })
    });
    g.bench_function("Runtime::handle_line_full probe/x (classify path)", |b| {
        let (mut rt, mut out) = fresh();
        b.iter(|| {
            out.clear();
            for l in &cheap {
                rt.handle_line_full(black_box(l), T0, &mut out);
            }
            black_box(out.len())
        })
    });
    g.finish();

    let p = 1_000;
    let prompts = prompt_lines(p, 100);
    let mut out = Vec::with_capacity(1 << 22);
    // Not a timing assertion: the workload must be what it claims (every stream ran to its end).
    assert_eq!(
        run_echo(&prompts, &mut out),
        p,
        "every prompt ends its turn"
    );
    let mut g = c.benchmark_group("runtime-echo-prompts");
    g.throughput(Throughput::Elements(p as u64));
    g.bench_function("1000 prompts over 100 sessions, full event streams", |b| {
        b.iter(|| black_box(run_echo(black_box(&prompts), &mut out)))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_secs(1)).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
