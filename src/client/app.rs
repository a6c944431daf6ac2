//! App mode (`dsh-conformance client --app -- <app command>`, docs/CONTRACT.md#s15.12): no
//! driver. Each scenario runs the app once on one prompt, given as the `{prompt}` argument, in
//! `DSH_CONFORMANCE_PROMPT` and on stdin (then closed); the app is to print the reply on stdout
//! and exit 0, or exit non-zero (with an error on stderr) when the run fails. The kit reads the
//! app's run as a driver would report it (its reply, its exit code) and judges it, with the wire,
//! by the scenario's one judge (`app_judge.rs`, sans-IO); the scenarios an app cannot meet are
//! left out (the report's hint names them and their checks), never a pass.
//! The scenarios are the one table's ([`super::scenario::SCENARIOS`]), each saying whether app
//! mode runs it ([`super::scenario::App`]).

use super::log::PeerLog;
use super::run::{setup, spawn, Options, Setup, Suite, POLL};
use super::verdicts::{evidenced, judge_confirmed, report};
use crate::runner::Event;
use crate::suite::{Report, Verdict};
use crate::trace::ExitInfo;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::scenario::{Scenario, SCENARIOS};

pub use super::app_judge::{left_out, left_out_note, not_judged};

/// The scenarios app mode runs, in report order.
pub fn scenarios() -> Vec<&'static Scenario> {
    SCENARIOS.iter().filter(|s| s.in_app_mode()).collect()
}

/// The argv placeholder replaced by the scenario's prompt.
pub const PROMPT: &str = "{prompt}";
/// What an app did in one scenario.
#[derive(Debug, Clone, Default)]
pub struct AppObservation {
    /// The peers, in launch order.
    pub peers: Vec<PeerLog>,
    /// Its exit code; `None` when it had not exited within the bound (then it was killed).
    pub exit: Option<i32>,
    /// Its stdout lines.
    pub stdout: Vec<String>,
    /// The end of its stderr.
    pub stderr: String,
    /// Its resident size (time, bytes), sampled in the scenarios that judge it.
    pub rss: Vec<(Duration, u64)>,
    /// From its prompt written to its exit (or to the bound, when it had not exited).
    pub wall: Duration,
}
fn selected(opts: &Options) -> Result<Vec<&'static Scenario>, String> {
    let all = scenarios();
    for name in &opts.scenarios {
        if let Some((_, why)) = left_out().into_iter().find(|l| l.0 == name.as_str()) {
            return Err(format!("app mode leaves out scenario {name:?}: {why}"));
        }
        if !all.iter().any(|s| s.name == name.as_str()) {
            let all: Vec<_> = all.iter().map(|s| s.name).collect();
            return Err(format!(
                "no app scenario {name:?} (app scenarios: {})",
                all.join(", ")
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|s| match opts.scenarios.is_empty() {
            true => opts.suite == Suite::All || opts.suite == s.suite,
            false => opts.scenarios.iter().any(|n| n == s.name),
        })
        .collect())
}

/// Runs the selected app scenarios against `app` (argv; `{runtime}` and `{prompt}` replaced).
pub fn run(app: &[std::ffi::OsString], opts: &Options) -> Result<Report, String> {
    let started = Instant::now();
    let mut verdicts = Vec::new();
    for s in &selected(opts)? {
        let t = Instant::now();
        let judged = || -> Result<Option<Vec<Verdict>>, String> {
            let Some(obs) = scenario(s, app, opts)? else {
                return Ok(None);
            };
            let verdicts = super::app_judge::verdicts(s, &obs);
            Ok(Some(evidenced(
                &obs,
                verdicts,
                s.name,
                &obs.peers,
                &obs.stderr,
            )))
        };
        judge_confirmed(&mut verdicts, s.checks, opts, t, judged)?;
    }
    // A check several scenarios decide (graceful-shutdown) gets the worst of their verdicts.
    let hint = (opts.scenarios.is_empty() && opts.suite != Suite::Robustness).then(left_out_note);
    Ok(report(app, verdicts, opts, started, hint))
}

/// Runs one app scenario; `None` when the run was stopped before its end.
fn scenario(
    s: &Scenario,
    app: &[std::ffi::OsString],
    opts: &Options,
) -> Result<Option<AppObservation>, String> {
    if opts.cancel.halted().is_some() {
        return Ok(None);
    }
    let prompt = s.prompt().unwrap_or_default();
    let Setup {
        dirs,
        t0,
        peers,
        cmd,
        mut env,
    } = setup(s.name, s.layers, app, &opts.kit, &[(PROMPT, &prompt)])?;
    env.push(("DSH_CONFORMANCE_PROMPT".to_owned(), prompt.clone()));
    if let Some(ms) = s.run_bound_ms() {
        env.push(("DSH_CONFORMANCE_RUN_TIMEOUT_MS".to_owned(), ms.to_string()));
    }
    let mut child = spawn("app", &cmd, &dirs, &env)?;
    let sampler =
        super::memory::sampled(s.checks).then(|| super::memory::Sampler::start(child.pid(), t0));
    child.write(format!("{prompt}\n").into_bytes());
    child.close_stdin();
    let began = Instant::now();
    let until = began + opts.op_timeout;
    let mut stdout = Vec::new();
    let stopped = || opts.cancel.halted().is_some();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stopped() {
            break;
        }
        match child.events.recv_timeout(left.min(POLL)) {
            Ok(ev) => {
                child.consumed(&ev);
                match ev {
                    Event::Line(o) => stdout.push(o.text().to_owned()),
                    Event::Closed(_) | Event::Flooded(_) => break,
                }
            }
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let exit = loop {
        match child.try_exit() {
            Some(ExitInfo::Code(c)) => break Some(c),
            Some(_) => break Some(-1),
            None if Instant::now() >= until || stopped() => break None,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let wall = began.elapsed();
    if stopped() {
        child.kill();
        return Ok(None);
    }
    let rss = sampler.map(|s| s.finish()).unwrap_or_default();
    // Let the last peer's exit reach the log.
    std::thread::sleep(Duration::from_millis(100));
    child.kill();
    let stderr = child.stderr_tail().0;
    std::thread::sleep(Duration::from_millis(50));
    if stopped() {
        return Ok(None);
    }
    let peers = peers.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(Some(AppObservation {
        peers,
        exit,
        stdout,
        stderr,
        rss,
        wall,
    }))
}
