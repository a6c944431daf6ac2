//! Golden traces that reproduce a finding: the sequence's exact bytes, the reference runtime's
//! answers as expectations (responses by id, any order; notifications ignored) and the barrier;
//! for a finding about the ending ([`Pin::Ending`]) also the ending (`shutdown` answered, or EOF)
//! with `== exit 0`. Replaying the trace passes against the reference runtime and fails against a
//! runtime that answers differently, twice, late, or never. A trace is kept only when its replay
//! fails for its finding (an ending trace must fail at its ending lines); findings that live in
//! notifications or formatting ([`Pin::None`]) get no trace, and the report says why.

use super::class::{DiffKind, FindingClass, Pin};
use super::exec::{pause_ms, Observed, Outcome, Target};
use super::gen::{End, Sequence, BARRIER_ID, BARRIER_METHOD, SHUTDOWN_ID};
use super::{exec, Finding, Options as FuzzOptions, Report};
use crate::ops::{Op, Renderer};
use crate::rules::Profile;
use crate::runner::{self, Options};
use crate::trace::syntax::escape_raw;
use crate::trace::Trace;
use crate::wire::json;
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// What the trace is about.
#[derive(Debug, Clone)]
pub struct Header<'a> {
    /// The finding.
    pub finding: &'a Finding,
    /// `seed`, `case` it came from.
    pub seed: u64,
    /// Case number.
    pub case: u64,
    /// Edition name (`current`, …).
    pub edition: &'a str,
    /// The runtime command, as shown.
    pub runtime: &'a str,
    /// Pin error messages (for message differences); otherwise codes only.
    pub messages: bool,
    /// Pin results (for result differences); otherwise any object.
    pub results: bool,
    /// Default deadline of each expectation.
    pub timeout: Duration,
    /// What the trace pins: with [`Pin::Ending`] it ends with shutdown/EOF and `== exit 0`, else
    /// with the barrier.
    pub pin: Pin,
}

/// The trace text for `seq`, with `reference`'s answers as the expectations.
pub fn trace_text(seq: &Sequence, reference: &Observed, h: &Header<'_>) -> String {
    let mut t = String::new();
    let class = &h.finding.class.to_string();
    let _ = writeln!(t, "# case: fuzz.{}", slug(class));
    let _ = writeln!(
        t,
        "# contract: black-box fuzz finding {class} (the reference runtime's answers, §2–§6)"
    );
    let _ = writeln!(t, "# editions: {}", h.edition);
    if seq.has_prompts() {
        let _ = writeln!(t, "# requires: model");
    }
    let _ = writeln!(t, "# timeout: {}ms", h.timeout.as_millis());
    let _ = writeln!(
        t,
        "# source: dsh-conformance fuzz --seed {} (case {}) against {}",
        h.seed,
        h.case,
        h.runtime.replace('\n', " ")
    );
    for l in h.finding.detail.lines() {
        let _ = writeln!(t, "# finding: {}", l.replace("{{", "{ {"));
    }
    for m in [
        "session.event",
        "session.status",
        "subagent.started",
        "subagent.finished",
        "session.finished",
    ] {
        let _ = writeln!(t, "ignore {{\"method\":\"{m}\"}}");
    }
    let mut r = Renderer::default();
    let mut bytes = Vec::new();
    let mut responses = reference.responses.clone();
    let awaited = seq.awaited_inits();
    for (i, op) in seq.ops.iter().enumerate() {
        if let Some((_, init)) = awaited.iter().find(|(at, _)| i == at + 1) {
            // The fuzzer waited for this answer before writing on; so does the trace.
            if let Some(list) = responses.get_mut(init).filter(|l| !l.is_empty()) {
                let first = list.remove(0);
                if let Some(p) = pattern(init, Some(&first), h) {
                    let _ = writeln!(t, "<< {p}");
                }
            }
        }
        if let Op::Advance(ms) = op {
            let ms = pause_ms(*ms);
            if ms > 0 {
                let _ = writeln!(t, ">>pause {ms}ms");
            }
            continue;
        }
        bytes.clear();
        r.render(op, &mut bytes);
        send_line(&mut t, &bytes);
    }
    let _ = writeln!(t, ">>raw \"\\n\"");
    let _ = writeln!(
        t,
        ">> {{\"jsonrpc\":\"2.0\",\"id\":\"{BARRIER_ID}\",\"method\":\"{BARRIER_METHOD}\"}}"
    );
    let barrier = json::to_string(&Value::from(BARRIER_ID));
    let shutdown = json::to_string(&Value::from(SHUTDOWN_ID));
    for (k, outcomes) in &responses {
        let id = k.as_str();
        if id == barrier || id == shutdown {
            continue;
        }
        for o in outcomes {
            if let Some(p) = pattern(id, Some(o), h) {
                let _ = writeln!(t, "<< {p}");
            }
        }
    }
    for k in &reference.unanswered {
        if let Some(p) = pattern(k, None, h) {
            let _ = writeln!(t, "<<? {p}");
        }
    }
    let _ = writeln!(
        t,
        "<< {{\"jsonrpc\":\"2.0\",\"id\":\"{BARRIER_ID}\",\"error\":{{\"code\":\"{{{{-32601|-32603}}}}\"}}}}"
    );
    if h.pin != Pin::Ending {
        // A second barrier judges what came after the first one (a second answer to it, say).
        let _ = writeln!(
            t,
            ">> {{\"jsonrpc\":\"2.0\",\"id\":\"{BARRIER_ID}-2\",\"method\":\"{BARRIER_METHOD}\"}}"
        );
        let _ = writeln!(
            t,
            "<< {{\"jsonrpc\":\"2.0\",\"id\":\"{BARRIER_ID}-2\",\"error\":{{\"code\":\"{{{{-32601|-32603}}}}\"}}}}"
        );
        return t;
    }
    match seq.end {
        End::Shutdown => {
            let _ = writeln!(
                t,
                ">> {{\"jsonrpc\":\"2.0\",\"id\":\"{SHUTDOWN_ID}\",\"method\":\"shutdown\"}}"
            );
            let _ = writeln!(
                t,
                "<< {{\"jsonrpc\":\"2.0\",\"id\":\"{SHUTDOWN_ID}\",\"result\":{{}}}}"
            );
        }
        End::Eof => {
            let _ = writeln!(t, ">>eof");
        }
    }
    let _ = writeln!(t, "== exit 0 within 15s");
    t
}

/// `>> line` for a plain one-line JSON frame, `>>raw "…"` for anything else.
fn send_line(t: &mut String, bytes: &[u8]) {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if let Some(body) = s.strip_suffix('\n') {
            let plain = !body.is_empty()
                && !body.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{feff}'])
                && !body.contains("{{")
                && body.trim() == body
                && body.starts_with('{')
                && json::parse(body).is_ok();
            if plain {
                let _ = writeln!(t, ">> {body}");
                return;
            }
        }
    }
    let _ = writeln!(t, ">>raw {}", escape_raw(bytes));
}

/// The expectation for one answer (`None`: the id cannot be written as a pattern).
fn pattern(id: &str, o: Option<&Outcome>, h: &Header<'_>) -> Option<String> {
    if id.contains("{{") {
        return None;
    }
    let id = json::parse(id).ok()?.value;
    let mut m = Map::new();
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("id".into(), id);
    match o {
        None => {}
        Some(Outcome::Result(r)) => {
            let pinned = h
                .results
                .then(|| json::parse(r).ok())
                .flatten()
                .map(|p| p.value)
                .filter(plain_strings);
            m.insert(
                "result".into(),
                pinned.unwrap_or_else(|| "{{object}}".into()),
            );
        }
        Some(Outcome::Error { code, message }) => {
            let mut e = Map::new();
            e.insert("code".into(), (*code).into());
            if h.messages {
                let msg = message
                    .replace("{{uuid}}", "{{any}}")
                    .replace("{{method}}", "{{any}}");
                let rest = msg
                    .replace("{{any}}", "")
                    .replace("{{cwd}}", "")
                    .replace("{{home}}", "");
                if !rest.contains("{{") && !rest.contains("}}") {
                    e.insert("message".into(), msg.into());
                }
            }
            m.insert("error".into(), Value::Object(e));
        }
    }
    Some(json::to_string(&Value::Object(m)))
}

/// Whether every string in `v` holds only the placeholders a normalised result may hold.
fn plain_strings(v: &Value) -> bool {
    match v {
        Value::String(s) => {
            let rest = s
                .replace("{{uuid}}", "")
                .replace("{{string}}", "")
                .replace("{{cwd}}", "")
                .replace("{{home}}", "");
            !rest.contains("{{") && !rest.contains("}}")
        }
        Value::Array(a) => a.iter().all(plain_strings),
        Value::Object(o) => o.values().all(plain_strings),
        _ => true,
    }
}

/// A class as a file-name-safe word.
pub fn slug(class: &str) -> String {
    class
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether replaying `text` fails against `subject` (for [`Pin::Ending`]: at one of its ending
/// lines) and passes against `reference`; `None` when a replay was cut short at `stop` (the
/// time budget), so that its verdict says nothing.
pub fn verify(
    text: &str,
    pin: Pin,
    subject: &Target,
    reference: &Target,
    timeout: Duration,
    stop: Instant,
) -> Option<(bool, bool)> {
    let Ok(trace) = Trace::parse(text, "fuzz-finding.trace") else {
        return Some((false, false));
    };
    let replay = |t: &Target| {
        let bound = timeout * 3 + Duration::from_secs(30);
        let left = stop.saturating_duration_since(Instant::now());
        let opts = Options {
            frame_timeout: timeout,
            case_timeout: bound.min(left),
            env: t.env.clone(),
            ..Options::default()
        };
        let r = runner::replay(&trace, &t.cmd, &opts);
        let cut = left < bound && r.wall + Duration::from_millis(50) >= left;
        (!cut).then_some(r)
    };
    let bad = replay(subject)?;
    let fails = match (pin, bad.failure()) {
        (_, None) => !bad.passed(),
        (Pin::Ending, Some(f)) => {
            f.at.as_deref()
                .and_then(|at| at.rsplit(':').next()?.parse::<usize>().ok())
                .and_then(|n| text.lines().nth(n.checked_sub(1)?))
                .is_some_and(is_ending_line)
        }
        (_, Some(_)) => true,
    };
    let passes = replay(reference)?.passed();
    Some((fails, passes))
}

/// Whether a trace line belongs to the ending (the shutdown request and answer, EOF, the exit).
fn is_ending_line(l: &str) -> bool {
    l.contains(SHUTDOWN_ID) || l.starts_with(">>eof") || l.starts_with("== exit")
}

/// Writes the trace of a shrunk finding under `dir` (verified unless `--no-verify`: a trace whose
/// replay does not fail for the finding, or fails against the reference too, is not written).
pub(super) fn write(
    opts: &FuzzOptions,
    rules: &Profile,
    rep: &mut Report,
    pin: Pin,
    dir: &std::path::Path,
    stop: Instant,
) {
    let out_of_time = "not written: the time budget was spent before it was verified";
    let reference = exec::run_sequence_until(
        &rep.sequence,
        &opts.reference,
        rules,
        opts.deadlines,
        Some(stop),
    );
    if reference.cut.is_some() {
        rep.trace_note = Some(out_of_time.into());
        return;
    }
    let d = opts.deadlines;
    let timeout = d.barrier + d.settle + Duration::from_secs_f64(rep.sequence.slow_secs());
    let runtime = opts.subject.cmd.to_string();
    let edition = opts.edition.to_string();
    let class = &rep.finding.class;
    let messages = matches!(
        class,
        FindingClass::Diff(DiffKind::ErrorMessage, _)
            | FindingClass::Rule(crate::rules::CheckId::ErrorUnknownMethod)
    );
    let h = Header {
        finding: &rep.finding,
        seed: opts.seed,
        case: rep.case,
        edition: &edition,
        runtime: &runtime,
        messages,
        results: true,
        timeout,
        pin,
    };
    let mut text = trace_text(&rep.sequence, &reference.observed, &h);
    if opts.verify {
        let Some(v) = verify(&text, pin, &opts.subject, &opts.reference, timeout, stop) else {
            rep.trace_note = Some(out_of_time.into());
            return;
        };
        rep.replay = Some(v);
        match v {
            (true, true) => text.insert_str(0, "# reproduces: replay fails against the fuzzed runtime and passes against the reference runtime\n"),
            (false, _) => {
                rep.trace_note = Some(format!(
                    "the replay of the shrunk sequence's trace does not fail for {class} (timing, or a cause the trace does not pin); rerun the fuzz command"
                ));
                return;
            }
            (true, false) => {
                rep.trace_note =
                    Some("the replay of the shrunk sequence's trace fails against the reference runtime too".into());
                return;
            }
        }
    } else {
        rep.trace_note = Some("not verified (--no-verify)".into());
    }
    let path = dir.join(format!(
        "{}-seed{}-case{}.trace",
        slug(&class.to_string()),
        opts.seed,
        rep.case
    ));
    // A reproducer is never dropped without a word: a failed write is the run's error.
    match std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, text)) {
        Ok(()) => rep.trace = Some(path),
        Err(e) => rep.write_error = Some(format!("cannot write {}: {e}", path.display())),
    }
}
