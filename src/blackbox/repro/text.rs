//! The text of a reproducer trace ([`trace_text`], [`stream_trace_text`]): its header, the
//! sequence's exact bytes, the reference runtime's answers as expectations, the barrier, and
//! for a finding about the ending the ending itself.

use super::super::class::Pin;
use super::super::exec::{pause_ms, Observed, Outcome};
use super::super::sequence::{End, Sequence, BARRIER_ID, BARRIER_METHOD, SHUTDOWN_ID};
use super::super::Finding;
use super::slug;
use crate::ops::{Op, Renderer};
use crate::trace::syntax::escape_raw;
use crate::wire::json;
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::time::Duration;

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
    /// The runtime was fuzzed with the kit's model stub (`--model-stub`): a trace with prompts
    /// then says `# requires: model-stub`, which `replay` satisfies by starting the stub itself.
    /// Without it the runtime answered the prompts on its own, and replays them so.
    pub model_stub: bool,
    /// Comment lines (without `# `) after the header: how far the sequence was shrunk.
    pub notes: &'a [String],
}

/// The trace's header: what it is about, where it came from, how far it was shrunk.
fn header(t: &mut String, seq: &Sequence, h: &Header<'_>, form: &str) {
    let class = &h.finding.class.to_string();
    let _ = writeln!(t, "# case: fuzz.{}", slug(class));
    let _ = writeln!(t, "# contract: black-box fuzz finding {class} ({form})");
    let _ = writeln!(t, "# editions: {}", h.edition);
    if h.model_stub && seq.has_prompts() {
        let _ = writeln!(t, "# requires: model-stub");
    }
    let _ = writeln!(t, "# timeout: {}ms", h.timeout.as_millis());
    let _ = writeln!(
        t,
        "# source: dsh-conformance fuzz --seed {} (case {}) against {}",
        h.seed,
        h.case,
        h.runtime.replace('\n', " ")
    );
    let _ = writeln!(t, "# class: {class}");
    for l in h.finding.detail.lines() {
        let _ = writeln!(t, "# finding: {}", l.replace("{{", "{ {"));
    }
    for n in h.notes {
        let _ = writeln!(t, "# {}", n.replace("{{", "{ {"));
    }
}

/// The trace text for `seq` that pins a rule class by the stream rules alone ([`Pin::Stream`]):
/// the exact bytes, then two barriers; every other answer and every notification is ignored,
/// so the whole conversation runs and `replay` judges the rules over it (the class's own rule
/// too: `# class:`). An `initialize` the fuzzer awaited is awaited too, unless its id is one
/// the ignore rule cannot leave out (not a plain string or a finite number).
pub fn stream_trace_text(seq: &Sequence, h: &Header<'_>) -> Option<String> {
    let awaited = seq.awaited_inits();
    let plain = |id: &str| {
        // A finite number is its JSON text (an alternative that parses is that value).
        if let Ok(Value::Number(n)) = serde_json::from_str::<Value>(id) {
            return n.as_f64().filter(|f| f.is_finite()).map(|_| id.to_owned());
        }
        let v: String = serde_json::from_str(id).ok()?;
        // An alternative of `{{not:…}}` that parses as JSON is that value, not the string.
        let ok = !v.is_empty()
            && serde_json::from_str::<Value>(&v).is_err()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.:/ ".contains(c));
        ok.then_some(v)
    };
    let ending = h.pin == Pin::Ending;
    let mut kept = vec![BARRIER_ID.to_string()];
    kept.push(match ending {
        true => SHUTDOWN_ID.to_string(),
        false => format!("{BARRIER_ID}-2"),
    });
    // An `initialize` whose id the ignore rule cannot leave out (`1e400`, echoed as null; a
    // string that reads as JSON) is not waited for: the trace writes on at once where the fuzzer
    // waited.
    // So is one whose id another request shares (its answer could not be told apart).
    let ids = request_ids(seq);
    let awaited: Vec<(usize, String)> = awaited
        .into_iter()
        .filter(|(_, id)| plain(id).is_some() && ids.iter().filter(|i| *i == id).count() == 1)
        .collect();
    for (_, id) in &awaited {
        kept.extend(plain(id));
    }
    kept.sort();
    kept.dedup();
    let mut t = String::new();
    header(
        &mut t,
        seq,
        h,
        "the stream rules replay judges over the conversation, §2–§6",
    );
    let _ = writeln!(t, "ignore {{\"method\":\"{{{{any}}}}\"}}");
    let _ = writeln!(t, "ignore {{\"id\":\"{{{{not:{}}}}}\"}}", kept.join("|"));
    send_ops(&mut t, seq, &awaited, |t, init| {
        let _ = writeln!(t, "<< {{\"jsonrpc\":\"2.0\",\"id\":{init}}}");
    });
    let barriers = [BARRIER_ID.to_string(), format!("{BARRIER_ID}-2")];
    for (i, id) in barriers[..if ending { 1 } else { 2 }].iter().enumerate() {
        if i == 1 {
            // The fuzzer's settle phase: the turns the ops started write on after the barrier's
            // answer (their events, a late answer) for a while; the second barrier comes after.
            let _ = writeln!(t, ">>pause {}ms", settle_pause(seq).as_millis());
        }
        let _ = writeln!(
            t,
            ">> {{\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"method\":\"{BARRIER_METHOD}\"}}"
        );
        let _ = writeln!(t, "<< {{\"jsonrpc\":\"2.0\",\"id\":\"{id}\"}}");
    }
    if ending {
        ending_lines(&mut t, seq.end);
    }
    Some(t)
}

/// The id echoes (JSON text) of every request of `seq`, once per request.
fn request_ids(seq: &Sequence) -> Vec<String> {
    let mut r = Renderer::default();
    let mut bytes = Vec::new();
    let mut out = Vec::new();
    for op in &seq.ops {
        bytes.clear();
        r.render(op, &mut bytes);
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        for line in text.lines() {
            if let crate::wire::Classified::Request(req) =
                crate::wire::classify(crate::wire::trim_js(line))
            {
                out.push(req.id.to_json());
            }
        }
    }
    out
}

/// How long a stream trace waits after its first barrier's answer: 2 s, and the sequence's
/// `slow` seconds up to 3 s more (the work its turns may still do, which the fuzzer's settle
/// phase saw). Not the allowance for a release's retries (17 s each): a replay would spend it
/// on every runtime, and on the reference runtime for nothing.
fn settle_pause(seq: &Sequence) -> Duration {
    let slow: f64 = seq
        .ops
        .iter()
        .map(|op| super::super::sequence::slow_secs_of(op).0)
        .sum();
    Duration::from_secs(2) + Duration::from_secs_f64(slow.min(3.0))
}

/// The trace text for `seq`, with `reference`'s answers as the expectations.
pub fn trace_text(seq: &Sequence, reference: &Observed, h: &Header<'_>) -> String {
    let mut t = String::new();
    header(&mut t, seq, h, "the reference runtime's answers, §2–§6");
    for m in [
        "session.event",
        "session.status",
        "subagent.started",
        "subagent.finished",
        "session.finished",
    ] {
        let _ = writeln!(t, "ignore {{\"method\":\"{m}\"}}");
    }
    let mut responses = reference.responses.clone();
    let awaited = seq.awaited_inits();
    send_ops(&mut t, seq, &awaited, |t, init| {
        if let Some(list) = responses.get_mut(init).filter(|l| !l.is_empty()) {
            let first = list.remove(0);
            if let Some(p) = pattern(init, Some(&first), h) {
                let _ = writeln!(t, "<< {p}");
            }
        }
    });
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
    ending_lines(&mut t, seq.end);
    t
}

/// The sequence's ops as sends (an `advance` as a pause), then the blank line the fuzzer writes;
/// before the op after each awaited `initialize` (`awaited`: op indexes and id echoes), the
/// expectation `init_answer` writes: the fuzzer waited for that answer before writing on, and so
/// does the trace.
fn send_ops(
    t: &mut String,
    seq: &Sequence,
    awaited: &[(usize, String)],
    mut init_answer: impl FnMut(&mut String, &str),
) {
    let mut r = Renderer::default();
    let mut bytes = Vec::new();
    for (i, op) in seq.ops.iter().enumerate() {
        if let Some((_, init)) = awaited.iter().find(|(at, _)| i == at + 1) {
            init_answer(t, init);
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
        send_line(t, &bytes);
    }
    let _ = writeln!(t, ">>raw \"\\n\"");
}

/// The ending of a trace about the ending: `shutdown` answered (or EOF), then `== exit 0`.
fn ending_lines(t: &mut String, end: End) {
    match end {
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
