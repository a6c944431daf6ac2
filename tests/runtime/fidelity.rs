//! Fidelity against the real runtime (issue item 6): the client side of every recorded transcript
//! in `fixtures/real-0.2.1rc2/raw/` is replayed into the in-memory reference
//! runtime; what comes back is normalised (uuids, times, job ids, cwd) and compared with what the
//! real runtime answered, per response id and per session stream (responses and sessions may
//! interleave differently). Every difference must be listed in `fixtures/fidelity-allowlist.json`
//! with its reason, and every allowlist entry must still be needed.

use dsh_conformance::runtime::{Config, Runtime};
use dsh_conformance::wire::{json, LineDecoder, LineEvent};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FAKE_CWD: &str = "/fidelity/cwd";
const EPOCH: u64 = 1_795_984_000_000;

/// One recorded record, reduced to what replay needs.
enum Rec {
    In { t: f64, bytes: Vec<u8> },
    Eof { t: f64 },
    Out { line: String, truncated: bool },
}

fn b64(s: &str) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter_map(val) {
        acc = (acc << 6) | c;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn load(path: &Path) -> (Vec<Rec>, bool, f64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut recs = Vec::new();
    let mut input_complete = true;
    let mut end_t = 0.0f64;
    for l in text.lines() {
        let o: Value =
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l:.80}", path.display()));
        let dir = o.get("dir").and_then(Value::as_str);
        let t = o.get("t").and_then(Value::as_f64).unwrap_or(0.0);
        // Long lines are stored cut: flagged (real-0.2.1rc2) or marked in the text (contract).
        let text_of = o
            .get("line")
            .or(o.get("raw"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let marked = text_of.contains(" chars truncated>");
        let truncated = marked || o.get("truncated").and_then(Value::as_bool).unwrap_or(false);
        end_t = end_t.max(t);
        match dir {
            Some("in") => {
                if o.get("note")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n.starts_with("EOF"))
                {
                    recs.push(Rec::Eof { t });
                    continue;
                }
                if truncated {
                    input_complete = false;
                }
                let partial = o
                    .get("partial")
                    .or(o.get("nonl"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let bytes = if let Some(r) = o.get("raw").and_then(Value::as_str) {
                    r.as_bytes().to_vec()
                } else {
                    let mut b = match o.get("b64").and_then(Value::as_str) {
                        Some(b) => b64(b),
                        None => o["line"].as_str().unwrap_or("").as_bytes().to_vec(),
                    };
                    if !partial {
                        b.push(b'\n');
                    }
                    b
                };
                recs.push(Rec::In { t, bytes });
            }
            Some("out") => {
                let line = o
                    .get("line")
                    .or(o.get("raw"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                for part in line.split('\n').filter(|p| !p.trim().is_empty()) {
                    recs.push(Rec::Out {
                        line: part.to_string(),
                        truncated,
                    });
                }
            }
            _ => {}
        }
    }
    (recs, input_complete, end_t)
}

// The process cwd of the replay being compared (normalised to `{{cwd}}` like [`FAKE_CWD`]).
thread_local!(static REPLAY_CWD: std::cell::RefCell<String> = Default::default());

/// Replays the input side into a runtime configured as `cfg` (`{{cwd}}` is its process cwd:
/// [`FAKE_CWD`], or a real directory for launches whose tools touch files); returns our lines.
fn replay(recs: &[Rec], end_t: f64, cfg: Config) -> Vec<String> {
    let cwd = cfg.process_cwd.to_string_lossy().into_owned();
    REPLAY_CWD.with(|c| c.replace(cwd.clone()));
    let mut rt = Runtime::new(cfg);
    let mut dec = LineDecoder::default();
    let mut out = Vec::new();
    let mut last_t = 0.0;
    let mut saw_out = true;
    let mut exited_at: Option<f64> = None;
    for r in recs {
        if let (Some(x), Rec::In { t, .. }) = (exited_at, r) {
            // After shutdown only the rest of the same burst is still read.
            if t - x > 0.005 || saw_out {
                break;
            }
        }
        match r {
            Rec::In { t, bytes } => {
                let now = EPOCH + (t * 1000.0) as u64;
                // Writes that the real runtime saw as one burst are handled before model work runs.
                if saw_out || t - last_t > 0.005 {
                    rt.poll(now, &mut out);
                }
                let text = String::from_utf8_lossy(bytes).replace("{{cwd}}", &cwd);
                let bytes: Vec<u8> = if text.as_bytes() != bytes.as_slice()
                    && !bytes.windows(7).any(|w| w == b"{{cwd}}")
                {
                    bytes.clone()
                } else {
                    text.into_bytes()
                };
                dec.push(&bytes, &mut |e| {
                    if let LineEvent::Line(l) = e {
                        rt.handle_line(l, now, &mut out);
                    }
                });
                last_t = *t;
                saw_out = false;
            }
            Rec::Eof { t } => {
                rt.poll(EPOCH + (t * 1000.0) as u64, &mut out);
                dec.finish();
                rt.on_eof(EPOCH + (last_t * 1000.0) as u64, &mut out);
            }
            Rec::Out { .. } => saw_out = true,
        }
        if rt.exit_code().is_some() && exited_at.is_none() {
            exited_at = Some(last_t);
        }
    }
    if rt.exit_code().is_none() {
        // Whatever the real runtime could still emit before the recording ended.
        rt.poll(EPOCH + (end_t * 1000.0) as u64, &mut out);
    }
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn is_hex(b: &[u8]) -> bool {
    b.iter()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

fn norm_str(s: &str) -> String {
    let mut s = s.replace(FAKE_CWD, "{{cwd}}");
    let cwd = REPLAY_CWD.with(|c| c.borrow().clone());
    if !cwd.is_empty() {
        s = s.replace(&cwd, "{{cwd}}");
    }
    while let Some(i) = s.find("/tmp/probe-") {
        let Some(j) = s[i..].find("/cwd") else { break };
        s.replace_range(i..i + j + 4, "{{cwd}}");
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if i + 36 <= b.len() {
            let c = &b[i..i + 36];
            let dashes = [8, 13, 18, 23].iter().all(|&d| c[d] == b'-');
            if dashes
                && is_hex(&c[..8])
                && is_hex(&c[9..13])
                && is_hex(&c[14..18])
                && is_hex(&c[19..23])
                && is_hex(&c[24..])
            {
                out.push_str("{{uuid}}");
                i += 36;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap();
        out.push(ch);
        i += ch.len_utf8();
    }
    if out.starts_with("bash-") && out.len() == 21 && is_hex(&out.as_bytes()[5..]) {
        return "{{job}}".into();
    }
    // Tool-use ids: the stub numbers them by its request count; the reference uses one.
    let tail = (out.strip_prefix("toolu_stub_")).or(out.strip_prefix("toolu_fake_"));
    if tail.is_some_and(|t| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit())) {
        return "{{tool-use-id}}".into();
    }
    out
}

const TIMING: &[&str] = &[
    "time",
    "time0",
    "dt",
    "startedAt",
    "finishedAt",
    "childCreatedAt",
    "delayMs",
];

fn norm(v: &mut Value) {
    match v {
        Value::String(s) => *s = norm_str(s),
        Value::Array(a) => a.iter_mut().for_each(norm),
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if k == "texts" {
                    // Streamed chunks: a cut may fall inside a uuid, so compare the joined text
                    // and the number of chunks.
                    if let Value::Array(a) = v {
                        let joined: String = a.iter().filter_map(Value::as_str).collect();
                        *v = serde_json::json!({"joined": norm_str(&joined), "chunks": a.len()});
                    }
                } else if TIMING.contains(&k.as_str()) {
                    *v = Value::String("{{t}}".into());
                } else {
                    norm(v);
                }
            }
        }
        _ => {}
    }
}

/// A normalised output frame.
struct Frame {
    label: String,
    value: Option<Value>, // None: recorded line truncated, compare the label only
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("\"{key}\":");
    let i = line.find(&pat)? + pat.len();
    let rest = &line[i..];
    let end = if let Some(r) = rest.strip_prefix('"') {
        r.find('"').map(|e| e + 2)?
    } else {
        rest.find([',', '}'])?
    };
    Some(&rest[..end])
}

/// Splits frames into streams: responses by id, notifications by session.
fn streams(lines: &[(String, bool)]) -> BTreeMap<String, Vec<Frame>> {
    let mut m: BTreeMap<String, Vec<Frame>> = BTreeMap::new();
    for (line, truncated) in lines {
        let (key, label, value) = if *truncated {
            let sid = field(line, "sessionId")
                .map(|s| norm_str(s.trim_matches('"')))
                .unwrap_or_default();
            let ty = field(line, "type")
                .unwrap_or("?")
                .trim_matches('"')
                .to_string();
            let seq = field(line, "seq").unwrap_or("?");
            (
                format!("session {sid}"),
                format!("session.event {ty} #{seq}"),
                None,
            )
        } else {
            // `JSON.parse`, as the client reads it: lone surrogates are kept (held text).
            let mut v: Value = json::parse(line).map_or(Value::String(line.clone()), |p| p.value);
            norm(&mut v);
            let method = v.get("method").and_then(Value::as_str).map(str::to_string);
            let p = v.get("params").cloned().unwrap_or(Value::Null);
            match method.as_deref() {
                None => {
                    let id = v.get("id").map(|i| i.to_string()).unwrap_or_default();
                    (format!("response {id}"), "response".to_string(), Some(v))
                }
                Some("session.event") => {
                    let ev = &p["event"];
                    let label = format!(
                        "session.event {} #{}",
                        ev["type"].as_str().unwrap_or("?"),
                        ev["seq"]
                    );
                    (
                        format!("session {}", p["sessionId"].as_str().unwrap_or("?")),
                        label,
                        Some(v),
                    )
                }
                Some(m) if m.starts_with("subagent.") => (
                    format!("session {}", p["parentSessionId"].as_str().unwrap_or("?")),
                    m.to_string(),
                    Some(v),
                ),
                Some(m) => (
                    format!("session {}", p["sessionId"].as_str().unwrap_or("?")),
                    m.to_string(),
                    Some(v),
                ),
            }
        };
        m.entry(key).or_default().push(Frame { label, value });
    }
    m
}

/// One difference between the recorded and our output.
#[derive(Debug)]
struct Diff {
    trace: String,
    stream: String,
    frame: String,
    path: String,
    detail: String,
}

fn diff_values(a: &Value, b: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{path}/{k}");
                match y.get(k) {
                    Some(vb) => diff_values(va, vb, &p, out),
                    None => out.push((p, format!("recorded {} but ours lacks it", short(va)))),
                }
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    out.push((
                        format!("{path}/{k}"),
                        format!("ours has {} but recorded lacks it", short(vb)),
                    ));
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_values(va, vb, &format!("{path}/{i}"), out);
            }
        }
        _ if a == b => {}
        _ => out.push((
            path.to_string(),
            format!("recorded {} ours {}", short(a), short(b)),
        )),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(150).map(|(i, _)| i).unwrap_or(s.len())]
        )
    } else {
        s
    }
}

/// Label without the seq, for alignment when seqs differ.
fn kind(label: &str) -> &str {
    label.split(" #").next().unwrap_or(label)
}

fn compare(
    trace: &str,
    rec: &BTreeMap<String, Vec<Frame>>,
    ours: &BTreeMap<String, Vec<Frame>>,
    diffs: &mut Vec<Diff>,
) {
    let empty = Vec::new();
    let keys: std::collections::BTreeSet<&String> = rec.keys().chain(ours.keys()).collect();
    for key in keys {
        let a = rec.get(key).unwrap_or(&empty);
        let b = ours.get(key).unwrap_or(&empty);
        // LCS alignment on the frame kind, so one extra or missing frame does not shift the rest.
        let (n, m) = (a.len(), b.len());
        let mut dp = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                dp[i][j] = if kind(&a[i].label) == kind(&b[j].label) {
                    dp[i + 1][j + 1] + 1
                } else {
                    dp[i + 1][j].max(dp[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let push = |diffs: &mut Vec<Diff>, frame: &str, path: &str, detail: String| {
            diffs.push(Diff {
                trace: trace.into(),
                stream: key.clone(),
                frame: kind(frame).into(),
                path: path.into(),
                detail,
            });
        };
        while i < n || j < m {
            if i < n && j < m && kind(&a[i].label) == kind(&b[j].label) {
                if a[i].label != b[j].label {
                    push(
                        diffs,
                        &a[i].label,
                        "/params/event/seq",
                        format!("recorded {} ours {}", a[i].label, b[j].label),
                    );
                }
                if let (Some(x), Some(y)) = (&a[i].value, &b[j].value) {
                    let mut d = Vec::new();
                    diff_values(x, y, "", &mut d);
                    for (p, detail) in d {
                        if p != "/params/event/seq" {
                            push(diffs, &a[i].label, &p, detail);
                        }
                    }
                }
                i += 1;
                j += 1;
            } else if j >= m || (i < n && dp[i + 1][j] >= dp[i][j + 1]) {
                push(
                    diffs,
                    &a[i].label,
                    "(missing)",
                    format!("recorded {} has no counterpart", a[i].label),
                );
                i += 1;
            } else {
                push(
                    diffs,
                    &b[j].label,
                    "(extra)",
                    format!("ours {} has no counterpart", b[j].label),
                );
                j += 1;
            }
        }
    }
}

struct Allow {
    trace: String,
    /// The response or session stream (`session s3`), or `*`.
    stream: String,
    frame: String,
    path: String,
    used: bool,
}

fn allowlist() -> Vec<Allow> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fidelity-allowlist.json");
    // The wire's `JSON.parse`: a stream may name a session id with a lone surrogate escape.
    let v: Value = json::parse(&std::fs::read_to_string(p).unwrap())
        .unwrap()
        .value;
    v["allow"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert!(
                e["reason"].as_str().is_some_and(|r| r.len() > 10),
                "every allowlist entry needs a reason: {e}"
            );
            Allow {
                trace: e["trace"].as_str().unwrap().into(),
                stream: e["stream"].as_str().unwrap_or("*").into(),
                frame: e["frame"].as_str().unwrap().into(),
                path: e["path"].as_str().unwrap().into(),
                used: false,
            }
        })
        .collect()
}

fn matches(pat: &str, s: &str) -> bool {
    pat == "*" || pat == s || (pat.ends_with('*') && s.starts_with(&pat[..pat.len() - 1]))
}

#[test]
fn replayed_transcripts_match_the_real_runtime_except_for_allowlisted_differences() {
    // The raw transcripts live once, in fixtures/real-0.2.1rc2/raw/ (contract sN as contract-sN).
    let raw = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-0.2.1rc2/raw");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&raw)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 70, "fixtures missing: {}", files.len());
    let tmp = std::env::temp_dir().join(format!("dsh-fidelity-{}", std::process::id()));
    let mut diffs = Vec::new();
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let (dir, name) = match stem.strip_prefix("contract-") {
            Some(n) => ("contract".to_string(), n.to_string()),
            None => ("real-0.2.1rc2".to_string(), stem.clone()),
        };
        let trace = format!("{dir}/{name}");
        let (recs, complete, end_t) = load(f);
        if !complete {
            diffs.push(Diff {
                trace,
                stream: "-".into(),
                frame: "-".into(),
                path: "(input truncated)".into(),
                detail: "the recording holds only a prefix of an input line".into(),
            });
            continue;
        }
        // Traces that continue another process's DSH_HOME share one.
        let group = if dir == "contract" {
            // s3 reuses s2's DSH_HOME and s5 reuses s4's (their descriptions say so).
            match name.as_str() {
                "s3" => "s2".to_string(),
                "s5" => "s4".to_string(),
                n => n.to_string(),
            }
        } else {
            name.replace("_1_setup", "").replace("_2_other_process", "")
        };
        let home = tmp.join(group);
        let ours = match super::minimal::launch_of(f, &home, FAKE_CWD) {
            Ok(cfg) => replay(&recs, end_t, cfg),
            Err(()) => Vec::new(), // the launch serves nothing: no stdout
        };
        let recorded: Vec<(String, bool)> = recs
            .iter()
            .filter_map(|r| match r {
                Rec::Out { line, truncated } => Some((line.clone(), *truncated)),
                _ => None,
            })
            .collect();
        let ours: Vec<(String, bool)> = ours.into_iter().map(|l| (l, false)).collect();
        // Our side of a truncated recorded frame is compared on its label only.
        let rec_streams = streams(&recorded);
        let mut our_streams = streams(&ours);
        for (k, frames) in &rec_streams {
            if let Some(o) = our_streams.get_mut(k) {
                for fr in frames.iter().filter(|f| f.value.is_none()) {
                    if let Some(x) = o.iter_mut().find(|x| x.label == fr.label) {
                        x.value = None;
                    }
                }
            }
        }
        compare(&trace, &rec_streams, &our_streams, &mut diffs);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let mut allow = allowlist();
    let mut unexplained = Vec::new();
    for d in &diffs {
        let mut hit = false;
        for a in allow.iter_mut() {
            if matches(&a.trace, &d.trace)
                && matches(&a.stream, &d.stream)
                && matches(&a.frame, &d.frame)
                && d.path.starts_with(&a.path)
            {
                a.used = true;
                hit = true;
            }
        }
        if !hit {
            // The stream as JSON would write it (a lone surrogate as its escape).
            let stream = json::to_string(&Value::String(d.stream.clone()));
            unexplained.push(format!(
                "{} [{}] {} {}: {}",
                d.trace,
                stream.trim_matches('"'),
                d.frame,
                d.path,
                d.detail
            ));
        }
    }
    let unused: Vec<String> = allow
        .iter()
        .filter(|a| !a.used)
        .map(|a| format!("{} {} {}", a.trace, a.frame, a.path))
        .collect();
    assert!(
        unexplained.is_empty() && unused.is_empty(),
        "{} unexplained differences:\n{}\n\nallowlist entries no longer needed:\n{}",
        unexplained.len(),
        unexplained.join("\n"),
        unused.join("\n")
    );
}
