//! Classification of a realistic line mix vs one `serde_json::from_slice::<Value>` on the same lines.
//!
//! The mix: every line the real runtime wrote or was sent in `fixtures/real-0.2.1rc2/raw/*.jsonl` (lines over 64 KiB skipped so the mix is not dominated by a few
//! giant frames), plus malformed lines. Target (issue 6): classification ≥ 0.8× the parse throughput.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dsh_conformance::wire::{classify, LineDecoder, LineEvent};
use std::hint::black_box;
use std::path::Path;

fn line_mix() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut lines = Vec::new();
    for dir in ["real-0.2.1rc2/raw"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("fixtures")
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for f in files
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        {
            for rec in std::fs::read_to_string(&f).unwrap().lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(rec) else {
                    continue;
                };
                if let Some(l) = v
                    .get("line")
                    .or_else(|| v.get("raw"))
                    .and_then(|l| l.as_str())
                {
                    if l.len() <= 64 * 1024 && v.get("len").is_none() {
                        lines.push(l.trim_end_matches('\n').to_owned());
                    }
                }
            }
        }
    }
    for bad in [
        "{not json",
        "}{",
        "nul",
        "[1,2,3]",
        "42",
        "{\"id\":null,\"method\":\"foo\"}",
        "\u{feff}{\"id\":1}",
    ] {
        lines.push(bad.to_owned());
    }
    lines
}

fn bench(c: &mut Criterion) {
    let lines = line_mix();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut stream = Vec::with_capacity(bytes);
    for l in &lines {
        stream.extend_from_slice(l.as_bytes());
        stream.push(b'\n');
    }
    let mut g = c.benchmark_group("classify-line-mix");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("serde_json::from_slice::<Value>", |b| {
        b.iter(|| {
            for l in &lines {
                let _ = black_box(serde_json::from_slice::<serde_json::Value>(black_box(
                    l.as_bytes(),
                )));
            }
        })
    });
    g.bench_function("wire::classify", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(classify(black_box(l)));
            }
        })
    });
    g.bench_function("LineDecoder (split only)", |b| {
        b.iter(|| {
            let mut d = LineDecoder::default();
            d.push(black_box(&stream), &mut |e| {
                black_box(e);
            });
        })
    });
    g.bench_function("LineDecoder+classify (stream)", |b| {
        b.iter(|| {
            let mut d = LineDecoder::default();
            d.push(black_box(&stream), &mut |e| {
                if let LineEvent::Line(l) = e {
                    black_box(classify(l));
                }
            });
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
