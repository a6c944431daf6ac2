//! Running the suite against a runtime command: preflight, checks in parallel on fresh processes,
//! oracles over each transcript, the baseline, the report.

use super::cases::{self, CheckCase};
use super::oracles;
use super::registry::{CheckInfo, CHECKS};
use super::report::{CheckResult, Report, Verdict};
use super::Baseline;
use crate::runner::{self, CaseReport, CommandSpec, Outcome, Transcript};
use crate::trace::Trace;
use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Options {
    /// The edition checked: `current`, `2026-08` or `legacy`.
    pub edition: String,
    /// Only checks whose id matches (substring, or a glob with `*`).
    pub filter: Option<String>,
    /// Demand -32603 for unknown methods (no -32601).
    pub strict_upstream: bool,
    /// Default deadline per expected frame.
    pub frame_timeout: Duration,
    /// Deadline for the runtime's first answer (preflight).
    pub start_timeout: Duration,
    /// Checks run at once, each against its own process.
    pub jobs: usize,
    /// Extra environment for the runtime (e.g. the model stub's).
    pub env: Vec<(String, String)>,
    /// Known failures.
    pub baseline: Baseline,
    /// Print progress to stderr.
    pub progress: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            edition: "current".into(),
            filter: None,
            strict_upstream: false,
            frame_timeout: Duration::from_secs(10),
            start_timeout: Duration::from_secs(30),
            jobs: 1,
            env: Vec::new(),
            baseline: Baseline::default(),
            progress: false,
        }
    }
}

/// Whether a check id matches a `--filter` pattern: a glob when it has `*`, else a substring.
pub fn matches_filter(id: &str, pattern: &str) -> bool {
    if !pattern.contains('*') {
        return id.contains(pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = id;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            let Some(at) = rest.find(p) else { return false };
            rest = &rest[at + p.len()..];
        }
    }
    rest.is_empty()
}

// `stdout any`: a runtime that also logs to stdout must still reach the checks that report it.
const PREFLIGHT: &str = r#"# case: preflight
== stdout any
>> {"jsonrpc":"2.0","id":"dsh-conformance-preflight","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"id":"dsh-conformance-preflight"}
"#;

fn runner_opts(opts: &Options) -> runner::Options {
    runner::Options {
        frame_timeout: opts.frame_timeout,
        case_timeout: Duration::from_secs(300),
        env: opts.env.clone(),
        ..runner::Options::default()
    }
}

/// Starts the runtime once and waits for an answer to `initialize`: a runtime that cannot start or
/// never answers is a usage problem (exit 2), not fifty identical failures.
pub fn preflight(cmd: &CommandSpec, opts: &Options) -> Result<(), String> {
    let trace = Trace::parse(PREFLIGHT, "preflight").map_err(|e| e.to_string())?;
    let mut ro = runner_opts(opts);
    ro.frame_timeout = opts.start_timeout;
    let r = runner::replay(&trace, cmd, &ro);
    match &r.outcome {
        Outcome::Pass => Ok(()),
        Outcome::Broken(m) => Err(m.clone()),
        // It started and wrote something, even if not a frame the kit can read: the checks will say what is wrong.
        Outcome::Fail(_) if !r.transcript.stdout.is_empty() => Ok(()),
        Outcome::Fail(f) => {
            let mut m = format!("`{cmd}` did not answer initialize: {}", f.reason);
            if !r.stderr_tail.is_empty() {
                m.push_str("\nstderr tail:\n");
                m.push_str(r.stderr_tail.trim_end());
            }
            Err(m)
        }
    }
}

fn run_oracle(name: &str, t: &Transcript) -> Result<(), String> {
    if t.truncated {
        return Err("the transcript outgrew its bound; whole-run rules could not be judged".into());
    }
    let sent: Vec<_> = oracles::sent_requests(&t.sent)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    match name {
        "exactly-once" => oracles::exactly_once(&sent, &t.stdout),
        "id-types" => oracles::id_types_preserved(&sent, &t.stdout),
        "seq-contiguous" => oracles::seq_contiguous(&t.stdout, |_| Some(0)),
        "frames-only" => oracles::frames_only(&t.stdout),
        "receipt-order" => oracles::receipt_before_response(&t.sent, &t.stdout),
        "finished-order" => oracles::finished_before_response(&t.sent, &t.stdout),
        "wait-after-idle" => oracles::wait_after_idle(&t.sent, &t.stdout),
        "turns-increase" => {
            for (sid, turns) in oracles::turns_by_session(&t.stdout) {
                for (i, n) in turns.iter().enumerate() {
                    if *n != i as u64 + 1 {
                        return Err(format!(
                            "session {sid:?}: turn/end #{} has turn {n}, expected {} (turns so far: {turns:?})",
                            i + 1,
                            i + 1
                        ));
                    }
                }
            }
            Ok(())
        }
        other => Err(format!("unknown oracle {other}")),
    }
}

fn failure_line(r: &CaseReport) -> Option<usize> {
    let at = r.failure()?.at.as_ref()?;
    at.rsplit(':').next()?.parse().ok()
}

/// Runs one case; `Ok(())` when it passed.
fn run_case(
    case: &CheckCase,
    cmd: &CommandSpec,
    opts: &Options,
    kept: &mut std::collections::HashMap<String, runner::CaseDirs>,
) -> Result<(), (String, String)> {
    let trace = case
        .trace(opts.strict_upstream)
        .map_err(|e| (format!("the check's trace is invalid: {e}"), String::new()))?;
    let r = match &trace.meta.continues {
        Some(prev) => match kept.get(prev) {
            Some(d) => runner::replay_in(&trace, cmd, &runner_opts(opts), d),
            None => {
                return Err((
                    format!("not testable: it continues case `{prev}`, which did not run"),
                    String::new(),
                ))
            }
        },
        None => {
            let d = runner::CaseDirs::new(false).map_err(|e| {
                (
                    format!("not testable: cannot create the case directories: {e}"),
                    String::new(),
                )
            })?;
            let r = runner::replay_in(&trace, cmd, &runner_opts(opts), &d);
            kept.insert(trace.meta.case.clone(), d);
            r
        }
    };
    match &r.outcome {
        Outcome::Pass => {}
        Outcome::Broken(m) => return Err((format!("not testable: {m}"), r.to_string())),
        Outcome::Fail(f) => {
            let reason = f.reason.lines().next().unwrap_or("").to_owned();
            let setup = matches!((case.setup_until, failure_line(&r)), (Some(s), Some(l)) if l < s);
            let reason = if setup {
                format!("not testable: a prerequisite failed: {reason}")
            } else {
                reason
            };
            return Err((reason, r.to_string()));
        }
    }
    for o in &case.oracles {
        if let Err(e) = run_oracle(o, &r.transcript) {
            let mut details = format!(
                "oracle {o} over {} ({} stdout lines):\n{e}",
                case.file,
                r.transcript.stdout.len()
            );
            let tail: Vec<_> = r.transcript.stdout.iter().rev().take(12).collect();
            if !tail.is_empty() {
                details.push_str("\nlast frames received:");
                for l in tail.into_iter().rev() {
                    details.push_str("\n  ");
                    details.push_str(&crate::trace::explain::clip(l, 300));
                }
            }
            return Err((e, details));
        }
    }
    Ok(())
}

fn judge(
    info: &'static CheckInfo,
    cases: &[CheckCase],
    cmd: &CommandSpec,
    opts: &Options,
) -> CheckResult {
    let started = Instant::now();
    let verdict = if !info.editions.contains_name(&opts.edition) {
        Verdict::Skip {
            reason: format!("applies to editions {}", info.editions.names()),
        }
    } else {
        let mine: Vec<_> = cases
            .iter()
            .filter(|c| c.check.id == info.id && c.applies_to(&opts.edition))
            .collect();
        if mine.is_empty() {
            Verdict::Fail {
                reason: format!(
                    "not testable: the kit has no trace for this check in edition {}",
                    opts.edition
                ),
                details: String::new(),
            }
        } else {
            // Cases that continue another case's process (`# continues: <case>`) reuse its directories.
            let mut kept: std::collections::HashMap<String, runner::CaseDirs> = Default::default();
            let mut v = Verdict::Pass;
            for c in mine {
                if let Err((reason, details)) = run_case(c, cmd, opts, &mut kept) {
                    v = Verdict::Fail { reason, details };
                    break;
                }
            }
            v
        }
    };
    let verdict = match (verdict, opts.baseline.reason(info.id)) {
        (Verdict::Fail { reason, .. }, Some(b)) => Verdict::KnownFailing {
            reason,
            baseline: b.to_owned(),
        },
        (Verdict::Pass, Some(b)) => Verdict::StaleBaseline {
            baseline: b.to_owned(),
        },
        (v, _) => v,
    };
    CheckResult {
        info: *info,
        verdict,
        duration: started.elapsed(),
    }
}

/// Runs every selected check against `cmd`. `Err` means the runtime could not be started or
/// answered nothing (preflight), or the kit's own checks are broken.
pub fn run(cmd: &CommandSpec, label: &str, opts: &Options) -> Result<Report, String> {
    let started = Instant::now();
    let cases = cases::all()?;
    let selected: Vec<&'static CheckInfo> = CHECKS
        .iter()
        .filter(|c| {
            opts.filter
                .as_deref()
                .is_none_or(|f| matches_filter(c.id, f))
        })
        .collect();
    if selected.is_empty() {
        return Err(format!(
            "no check matches --filter {:?}",
            opts.filter.as_deref().unwrap_or("")
        ));
    }
    preflight(cmd, opts)?;
    let queue = Arc::new(Mutex::new(
        selected
            .iter()
            .copied()
            .enumerate()
            .collect::<VecDeque<_>>(),
    ));
    let results: Arc<Mutex<Vec<Option<CheckResult>>>> =
        Arc::new(Mutex::new(vec![None; selected.len()]));
    let done = Arc::new(Mutex::new(0usize));
    let total = selected.len();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, 64) {
            let (queue, results, done, cases) =
                (queue.clone(), results.clone(), done.clone(), &cases);
            s.spawn(move || loop {
                let Some((i, info)) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
                else {
                    return;
                };
                let r = judge(info, cases, cmd, opts);
                if opts.progress {
                    let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                    *d += 1;
                    let mut err = std::io::stderr().lock();
                    let _ = write!(
                        err,
                        "\r\x1b[2K[{}/{total}] {} {}",
                        *d,
                        r.verdict.word(),
                        info.id
                    );
                    let _ = err.flush();
                }
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    if opts.progress {
        eprint!("\r\x1b[2K");
    }
    let results = Arc::try_unwrap(results)
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    Ok(Report {
        runtime: label.to_owned(),
        edition: opts.edition.clone(),
        results,
        duration: started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_substrings_or_globs() {
        assert!(matches_filter("frame.batch-ignored", "batch"));
        assert!(matches_filter("frame.batch-ignored", "frame.*"));
        assert!(matches_filter("frame.batch-ignored", "*.batch-*"));
        assert!(!matches_filter("frame.batch-ignored", "turn.*"));
        assert!(matches_filter("frame.batch-ignored", "*"));
        assert!(matches_filter("frame.batch-ignored", "frame*"));
    }
}
