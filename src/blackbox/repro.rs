//! Golden traces that reproduce a finding: the sequence's exact bytes, the reference runtime's
//! answers as expectations (responses by id, any order; notifications ignored) and the barrier;
//! for a finding about the ending ([`Pin::Ending`]) also the ending (`shutdown` answered, or EOF)
//! with `== exit 0`. Replaying the trace passes against the reference runtime and fails against a
//! runtime that answers differently, twice, late, or never, or whose conversation breaks a stream
//! rule (`replay` judges them; [`Pin::Stream`]). A trace is kept only when its replay fails for its
//! finding (a rule class: the rule is among those broken; an ending trace: at its ending lines);
//! the few classes no trace can show ([`Pin::None`]) get none, and the report says why.

use super::class::{DiffKind, FindingClass, Pin};
use super::exec::{pause_ms, Observed, Outcome, Target};
use super::sequence::{End, Sequence, BARRIER_ID, BARRIER_METHOD, SHUTDOWN_ID};
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
    let mut r = Renderer::default();
    let mut bytes = Vec::new();
    for (i, op) in seq.ops.iter().enumerate() {
        if let Some((_, init)) = awaited.iter().find(|(at, _)| i == at + 1) {
            // The fuzzer waited for this answer before writing on; so does the trace.
            let _ = writeln!(t, "<< {{\"jsonrpc\":\"2.0\",\"id\":{init}}}");
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
        .map(|op| super::sequence::slow_secs_of(op).0)
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
    ending_lines(&mut t, seq.end);
    t
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

/// Whether replaying `text` fails against `subject` for `class` and passes against `reference`;
/// `None` when a replay was cut short at `stop` (the time budget), so that its verdict says
/// nothing. A replay fails for the class as `dsh-conformance replay` shows it: a rule class when
/// the stream rules judged over the conversation (its own rule included) report its check id;
/// unless `pin` is [`Pin::Stream`] (a trace of the stream rules alone), also when the trace's
/// expectations fail ([`Pin::Ending`]: at one of its ending lines). Passing means the
/// expectations hold and no stream rule broke.
pub fn verify(
    text: &str,
    class: &FindingClass,
    pin: Pin,
    subject: &Target,
    reference: &Target,
    timeout: Duration,
    stop: Instant,
) -> Option<(bool, bool)> {
    let Ok(trace) = Trace::parse(text, "fuzz-finding.trace") else {
        return Some((false, false));
    };
    let edition = trace.meta.editions.first().copied().unwrap_or_default();
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
    let own = class.check();
    let bad = replay(subject)?;
    let broken = stream_rules(&bad, edition, own);
    let by_rule = own.is_some_and(|c| broken.iter().any(|f| f.check == c));
    let fails = by_rule
        || match (pin, bad.failure()) {
            (Pin::Stream, _) => false,
            (_, None) => !bad.passed(),
            (Pin::Ending, Some(f)) => {
                f.at.as_deref()
                    .and_then(|at| at.rsplit(':').next()?.parse::<usize>().ok())
                    .and_then(|n| text.lines().nth(n.checked_sub(1)?))
                    .is_some_and(is_ending_line)
            }
            // A rule class the stream rules did not name: only the fuzzer's end-of-run judgement
            // (a request never answered, a session never idle) shows as an answer that never
            // came; any other failure may be another class's.
            (_, Some(f)) if own.is_some() => matches!(
                f.kind,
                crate::trace::failure::FailureKind::Timeout
                    | crate::trace::failure::FailureKind::Missing
            ),
            (_, Some(_)) => true,
        };
    let good = replay(reference)?;
    let passes = good.passed() && stream_rules(&good, edition, own).is_empty();
    Some((fails, passes))
}

/// The stream rules a replayed case's conversation broke (and the rule of `own`, the trace's
/// `# class:`), judged as `replay` judges a fuzz finding's trace (as the fuzzer judges).
fn stream_rules(
    r: &runner::CaseReport,
    edition: crate::edition::Edition,
    own: Option<crate::rules::CheckId>,
) -> Vec<crate::suite::stream::Finding> {
    let complete = matches!(r.outcome, runner::Outcome::Pass | runner::Outcome::Fail(_));
    if !complete || r.transcript.truncated {
        return Vec::new();
    }
    crate::suite::stream::judge_as_fuzzed(&r.transcript, own, edition, false)
}

/// Whether a trace line belongs to the ending (the shutdown request and answer, EOF, the exit).
fn is_ending_line(l: &str) -> bool {
    l.contains(SHUTDOWN_ID) || l.starts_with(">>eof") || l.starts_with("== exit")
}

/// Writes the trace of a shrunk finding under `dir` (verified unless `--no-verify`: a trace whose
/// replay does not fail for the finding, or fails against the reference too, is not written).
/// `notes` become comment lines of the trace (how far it was shrunk). With `verify` false (the
/// time budget was spent, or the run was interrupted) the trace is written unverified and
/// `unverified` says why.
pub(super) fn write(
    opts: &FuzzOptions,
    rules: &Profile,
    rep: &mut Report,
    dir: &std::path::Path,
    stop: Instant,
    notes: &[String],
    unverified: Option<&str>,
) {
    let mut unverified: Option<String> = unverified.map(str::to_owned);
    let class = rep.finding.class.clone();
    let d = opts.deadlines;
    let timeout = d.barrier + d.settle + Duration::from_secs_f64(rep.sequence.slow_secs());
    let runtime = opts.subject.cmd.to_string();
    let edition = opts.edition.to_string();
    let messages = matches!(
        class,
        FindingClass::Diff(DiffKind::ErrorMessage, _)
            | FindingClass::Rule(crate::rules::CheckId::ErrorUnknownMethod)
    );
    let finding = rep.finding.clone();
    let h = Header {
        finding: &finding,
        seed: opts.seed,
        case: rep.case,
        edition: &edition,
        runtime: &runtime,
        messages,
        results: true,
        timeout,
        pin: class.pin(),
        model_stub: opts.model_stub,
        notes,
    };
    let v = Verifier {
        opts,
        class: &class,
        timeout,
        stop,
    };
    let text = match stream_text(rep, &h, &v, &mut unverified) {
        Some(t) => t,
        None => match responses_text(rules, rep, &h, &v, &mut unverified) {
            Some(t) => t,
            None => return,
        },
    };
    finish(rep, dir, &class, opts, text, unverified.as_deref());
}

/// What a written trace is verified with: both runtimes, the class it must show, its deadline,
/// and the time budget's end.
struct Verifier<'a> {
    opts: &'a FuzzOptions,
    class: &'a FindingClass,
    timeout: Duration,
    stop: Instant,
}

impl Verifier<'_> {
    /// Whether `text` fails against the fuzzed runtime and passes against the reference
    /// (`None`: the time budget cut it short).
    fn verify(&self, text: &str, pin: Pin) -> Option<(bool, bool)> {
        let o = self.opts;
        let (s, r) = (&o.subject, &o.reference);
        verify(text, self.class, pin, s, r, self.timeout, self.stop)
    }
}

/// A rule class first gets a trace of the stream rules alone (the whole conversation is judged,
/// so another deviation cannot end the replay before the class shows). `None` when the class
/// has no such trace, or its replay does not show the class (the class is one the fuzzer
/// judges at the end: a request never answered, a session never idle).
fn stream_text(
    rep: &mut Report,
    h: &Header<'_>,
    v: &Verifier<'_>,
    unverified: &mut Option<String>,
) -> Option<String> {
    let class = v.class;
    let lenient = class.check().is_some() && matches!(class.pin(), Pin::Stream | Pin::Ending);
    let text = lenient
        .then(|| stream_trace_text(&rep.sequence, h))
        .flatten()?;
    if unverified.is_some() || !v.opts.verify {
        return Some(text);
    }
    let pin = match class.pin() {
        Pin::Ending => Pin::Ending,
        _ => Pin::Stream,
    };
    match v.verify(&text, pin) {
        None => {
            // Cut by the time budget: written as it is, unverified.
            *unverified = Some(CUT.into());
            Some(text)
        }
        Some(r @ (true, true)) => {
            rep.replay = Some(r);
            let how = match pin {
                Pin::Ending => "at its ending",
                _ => "with the class among the rules broken",
            };
            Some(format!("# reproduces: replay fails against the fuzzed runtime {how}, and passes against the reference runtime\n{text}"))
        }
        Some(_) => None,
    }
}

/// The trace of the reference runtime's answers to the sequence, verified; `None` when it is not
/// written (why is in `rep.trace_note`).
fn responses_text(
    rules: &Profile,
    rep: &mut Report,
    h: &Header<'_>,
    v: &Verifier<'_>,
    unverified: &mut Option<String>,
) -> Option<String> {
    let pin = match v.class.pin() {
        Pin::Stream => Pin::Responses,
        p => p,
    };
    let h = Header { pin, ..h.clone() };
    let o = v.opts;
    let reference = exec::run_sequence_until(
        &rep.sequence,
        &o.reference,
        rules,
        o.deadlines,
        Some(v.stop),
    );
    if reference.cut.is_some() {
        rep.trace_note = Some(
            "not written: the time budget was spent before the reference runtime's answers were read"
                .into(),
        );
        return None;
    }
    let text = trace_text(&rep.sequence, &reference.observed, &h);
    if unverified.is_some() || !o.verify {
        return Some(text);
    }
    let Some(r) = v.verify(&text, pin) else {
        *unverified = Some(CUT.into());
        return Some(text);
    };
    rep.replay = Some(r);
    match r {
        (true, true) => Some(format!("# reproduces: replay fails against the fuzzed runtime and passes against the reference runtime\n{text}")),
        (false, _) => {
            rep.trace_note = Some(format!(
                "not written: the replay of the {} sequence's trace does not fail for {} (timing, or a cause the trace does not pin); rerun the fuzz command",
                if rep.ops.1 < rep.ops.0 { "shrunk" } else { "unshrunk" },
                v.class
            ));
            None
        }
        (true, false) => {
            rep.trace_note = Some(
                "not written: the replay of the trace fails against the reference runtime too".into(),
            );
            None
        }
    }
}

/// Why a trace the time budget cut short while it was verified is written unverified.
const CUT: &str = "the time budget was spent before it was verified";

/// Writes a trace's `text` (marked unverified when `unverified` says why).
fn finish(
    rep: &mut Report,
    dir: &std::path::Path,
    class: &FindingClass,
    opts: &FuzzOptions,
    mut text: String,
    unverified: Option<&str>,
) {
    if let Some(why) = unverified {
        text.insert_str(0, &format!("# not verified: {why}\n"));
        rep.trace_note = Some(format!("not verified: {why}"));
    } else if !opts.verify {
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
