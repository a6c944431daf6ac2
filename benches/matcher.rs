//! The trace matcher (issue 6): frames/s judged against a long generated trace with captures,
//! `<<*` runs, `{{seq}}`, many interleaved lanes and an `<<unordered` group.
//!
//! The trace: `initialize`, then `ROUNDS` rounds; each round prompts `SESSIONS` sessions in one run
//! of sends (so all lanes are active at once and interleave), expects each session's stream with a
//! message-id capture bound by the receipt and used by the response, then answers a run of
//! `probe/x` requests in an `<<unordered` group. The frames are produced once by the in-memory
//! reference runtime (virtual time) driven by the matcher itself; the bench replays them: it feeds
//! the same lines at the same points, so it measures the matcher alone (parse, route, match,
//! capture), not the runtime or pipes. The limit next to it: one serde_json parse per frame; and
//! the two parsers of the kit on the same frames: `wire::json::parse` into a `Value` (what the
//! matcher did per frame before) and `wire::json::Tape::parse` (what it does now).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use dsh_conformance::runtime::{Config, Edition, Runtime};
use dsh_conformance::trace::{Action, Env, Matcher, Trace};
use dsh_conformance::wire::output::Output;
use dsh_conformance::wire::{LineDecoder, LineEvent};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

const SESSIONS: usize = 40;
const ROUNDS: usize = 5;
const PROBES: usize = 40;
const EV: &str = r#""jsonrpc":"2.0","method":"session.event""#;

fn trace_text() -> String {
    let mut t = String::from("# case: bench.long\n");
    t += r#">> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#;
    t += "\n";
    t += r#"<< {"jsonrpc":"2.0","id":"init","result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"{{string}}"}}}"#;
    t += "\n";
    let mut id = 0;
    for r in 1..=ROUNDS {
        for s in 0..SESSIONS {
            id += 1;
            let _ = writeln!(
                t,
                r#">> {{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"s{s}","contentBlocks":[{{"type":"text","text":"reply: r{r}s{s}"}}]}}}}"#
            );
        }
        let first = id - SESSIONS + 1;
        for s in 0..SESSIONS {
            let rid = first + s;
            let _ = writeln!(
                t,
                r#"<<* {{{EV},"params":{{"sessionId":"s{s}","event":{{"seq":"{{{{seq}}}}","time":"{{{{number}}}}"}}}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<< {{{EV},"params":{{"sessionId":"s{s}","event":{{"type":"agent/inbox/spliced","seq":"{{{{seq}}}}","data":{{"target":"next-turn","inserted":[{{"id":"{{{{$m{r}_{s}:string}}}}","role":"user","content":[{{"type":"text","text":"reply: r{r}s{s}"}}]}}]}}}}}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<< {{"jsonrpc":"2.0","method":"session.status","params":{{"sessionId":"s{s}","status":"running"}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<< {{{EV},"params":{{"sessionId":"s{s}","event":{{"type":"turn/start","seq":"{{{{seq}}}}","data":{{"turn":{r}}}}}}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<< {{"jsonrpc":"2.0","id":{rid},"result":{{"messageId":"{{{{$m{r}_{s}}}}}"}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<<* {{{EV},"params":{{"sessionId":"s{s}","event":{{"seq":"{{{{seq}}}}"}}}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<< {{{EV},"params":{{"sessionId":"s{s}","event":{{"type":"assistant/message","seq":"{{{{seq}}}}","data":{{"turn":{r},"message":{{"role":"assistant","content":[{{"type":"text","text":"r{r}s{s}"}},"{{{{...}}}}"]}}}}}}}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<<* {{{EV},"params":{{"sessionId":"s{s}","event":{{"seq":"{{{{seq}}}}"}}}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<< {{{EV},"params":{{"sessionId":"s{s}","event":{{"type":"turn/end","seq":"{{{{seq}}}}","data":{{"turn":{r},"reason":{{"kind":"completed"}}}}}}}}}}"#
            );
            let _ = writeln!(
                t,
                r#"<< {{"jsonrpc":"2.0","method":"session.status","params":{{"sessionId":"s{s}","status":"idle"}}}}"#
            );
        }
        let first = id + 1;
        for _ in 0..PROBES {
            id += 1;
            let _ = writeln!(t, r#">> {{"jsonrpc":"2.0","id":{id},"method":"probe/x"}}"#);
        }
        t += "<<unordered\n";
        for k in (first..=id).rev() {
            let _ = writeln!(
                t,
                r#"<< {{"jsonrpc":"2.0","id":{k},"error":{{"code":"{{{{-32601|-32603}}}}","message":"{{{{string}}}}"}}}}"#
            );
        }
        t += "<<end\n";
    }
    t
}

fn env() -> Env {
    let d = std::env::temp_dir().to_string_lossy().into_owned();
    Env {
        cwd: d.clone(),
        home: d,
    }
}

fn matcher(trace: &Trace) -> Matcher {
    let hour = Duration::from_secs(3600);
    Matcher::new(trace, env(), hour, hour)
}

/// The matcher's clock stands still: no deadline fires, the bench measures matching only.
const NOW: Duration = Duration::from_millis(1);

/// Drives the matcher with the in-memory runtime; returns the stdout lines in the order fed.
fn record(trace: &Trace) -> Vec<String> {
    let mut m = matcher(trace);
    let mut rt = Runtime::new(Config::new(Edition::Current));
    let mut dec = LineDecoder::default();
    let mut pending: VecDeque<String> = VecDeque::new();
    let mut fed = Vec::new();
    let mut now_ms = 1_800_000_000_000u64;
    let mut out = Vec::new();
    let collect = |out: &mut Vec<u8>, pending: &mut VecDeque<String>| {
        LineDecoder::default().push(out, &mut |e| {
            if let LineEvent::Line(l) = e {
                pending.push_back(l.to_owned());
            }
        });
        out.clear();
    };
    loop {
        match m.poll(NOW) {
            Action::Done => break,
            Action::Write(b) => {
                dec.push(&b, &mut |e| {
                    if let LineEvent::Line(l) = e {
                        rt.handle_line(l, now_ms, &mut out);
                    }
                });
                collect(&mut out, &mut pending);
            }
            Action::WaitUntil(_) => {
                if let Some(l) = pending.pop_front() {
                    m.on_output(&Output::parse(fed.len() + 1, l.clone()), NOW);
                    fed.push(l);
                } else if let Some(due) = rt.next_deadline() {
                    now_ms = now_ms.max(due);
                    rt.poll(now_ms, &mut out);
                    collect(&mut out, &mut pending);
                } else {
                    panic!(
                        "the runtime is idle but the matcher waits: {:?}",
                        m.failure()
                    );
                }
            }
            other => panic!("unexpected action {other:?}"),
        }
    }
    assert!(m.failure().is_none(), "{:?}", m.failure());
    fed
}

/// Replays recorded lines into a fresh matcher; returns how many were fed.
fn replay(mut m: Matcher, lines: &[String]) -> usize {
    let mut next = 0;
    loop {
        match m.poll(NOW) {
            Action::Done => break,
            Action::Write(b) => {
                black_box(b);
            }
            Action::WaitUntil(_) => {
                // The reader's parse is part of each line's cost, as in a real run.
                m.on_output(&Output::parse(next + 1, lines[next].clone()), NOW);
                next += 1;
            }
            other => panic!("unexpected action {other:?}"),
        }
    }
    next
}

fn bench(c: &mut Criterion) {
    let text = trace_text();
    let trace = Trace::parse(&text, "bench.trace").expect("generated trace parses");
    let lines = record(&trace);
    // Not a timing assertion: the replay must judge every frame and pass, like the recording.
    assert_eq!(replay(matcher(&trace), &lines), lines.len());
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    eprintln!(
        "matcher bench: {} trace lines, {} frames, {} KiB",
        text.lines().count(),
        lines.len(),
        bytes / 1024
    );
    let mut g = c.benchmark_group("matcher");
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.bench_function("limit: serde_json parse per frame", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(serde_json::from_str::<serde_json::Value>(black_box(l)).unwrap());
            }
        })
    });
    g.bench_function(
        "wire::json::parse per frame (a Value, as the matcher built)",
        |b| {
            b.iter(|| {
                for l in &lines {
                    drop(dsh_conformance::wire::json::Deep::new(
                        dsh_conformance::wire::json::parse(black_box(l))
                            .unwrap()
                            .value,
                    ));
                }
            })
        },
    );
    g.bench_function(
        "wire::json::Tape::parse per frame (what the matcher reads)",
        |b| {
            let mut tape = dsh_conformance::wire::json::Tape::default();
            b.iter(|| {
                for l in &lines {
                    tape.parse(black_box(l)).unwrap();
                    black_box(&tape);
                }
            })
        },
    );
    g.bench_function(
        "Matcher: long trace, captures, <<*, lanes, unordered",
        |b| {
            b.iter_batched(
                || matcher(&trace),
                |m| black_box(replay(m, &lines)),
                BatchSize::LargeInput,
            )
        },
    );
    g.bench_function("Matcher::new only (compile the trace)", |b| {
        b.iter(|| black_box(matcher(&trace)))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(std::time::Duration::from_secs(1)).measurement_time(std::time::Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
