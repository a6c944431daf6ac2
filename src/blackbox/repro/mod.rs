//! Golden traces that reproduce a finding: the sequence's exact bytes, the reference runtime's
//! answers as expectations (responses by id, any order; notifications ignored) and the barrier;
//! for a finding about the ending ([`Pin::Ending`]) also the ending (`shutdown` answered, or EOF)
//! with `== exit 0`. Replaying the trace passes against the reference runtime and fails against a
//! runtime that answers differently, twice, late, or never, or whose conversation breaks a stream
//! rule (`replay` judges them; [`Pin::Stream`]). A trace is kept only when its replay fails for its
//! finding (a rule class: the rule is among those broken; an ending trace: at its ending lines);
//! the few classes no trace can show ([`Pin::None`]) get none, and the report says why.

mod text;

use super::class::{DiffKind, FindingClass, Pin};
use super::exec::Target;
use super::sequence::SHUTDOWN_ID;
use super::{exec, Options as FuzzOptions, Report};
use crate::rules::Profile;
use crate::runner::{self, Options};
use crate::trace::Trace;
use std::time::{Duration, Instant};
pub use text::{stream_trace_text, trace_text, Header};

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
