//! `dsh-conformance client`: runs each scenario against the client under test (the I/O around
//! [`super::scenario`]): a fresh `DSH_HOME` and workspace, the shim the client launches as its
//! runtime, the peers, the driver's operations, bounded waits, and the report.

use super::driver::Outcome;
use super::log::Peers;
use super::scenario::{Observation, Scenario, SCENARIOS};
use crate::check::CheckId;
use crate::edition::Edition;
use crate::runner::{CaseDirs, Child, CommandSpec, Event, Halt, StdoutLimit};
use crate::suite::report::Stopped;
use crate::suite::{Baseline, CheckResult, Report, Verdict};
use std::ffi::{OsStr, OsString};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a wait looks at the run's stop switch.
pub(crate) const POLL: Duration = Duration::from_millis(100);

/// The argv placeholder replaced by the shim's path.
pub const PLACEHOLDER: &str = "{runtime}";

/// How a client run is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// The kit's own executable (the shim re-invokes it as `client-peer`).
    pub kit: PathBuf,
    /// How long one operation may take before the scenario stops (a hang).
    pub op_timeout: Duration,
    /// Only these scenarios (the suite's when empty).
    pub scenarios: Vec<String>,
    /// The suite run when no scenario is named.
    pub suite: Suite,
    /// Known failures.
    pub baseline: Baseline,
    /// SHOULD failures fail the run too.
    pub should_fail: bool,
    /// Stops the run between operations (SIGINT, SIGTERM): the scenario then running is ended,
    /// its checks and those of the scenarios after it are NOT RUN, the report is partial.
    pub cancel: crate::runner::Cancel,
}

/// Which scenarios a run takes when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Suite {
    /// What the contract allows a runtime (the `client.*` checks of §15.1–§15.6).
    #[default]
    Contract,
    /// What the contract forbids but clients meet ([`super::robust`], §15.11; never MUST).
    Robustness,
    /// Both.
    All,
}

impl Suite {
    /// The suite's scenarios, in report order.
    pub fn scenarios(self) -> Vec<&'static Scenario> {
        (SCENARIOS.iter())
            .filter(|s| self == Suite::All || s.suite == self)
            .collect()
    }
}

/// The scenarios `names` selects (of either suite), or `suite`'s when none is named; `Err`
/// names an unknown one.
pub fn select(names: &[String], suite: Suite) -> Result<Vec<&'static Scenario>, String> {
    let all = Suite::All.scenarios();
    if let Some(bad) = names
        .iter()
        .find(|n| !all.iter().any(|s| s.name == n.as_str()))
    {
        let all: Vec<_> = all.iter().map(|s| s.name).collect();
        return Err(format!(
            "no scenario {bad:?} (scenarios: {})",
            all.join(", ")
        ));
    }
    if names.is_empty() {
        return Ok(suite.scenarios());
    }
    Ok(all
        .into_iter()
        .filter(|s| names.iter().any(|n| n == s.name))
        .collect())
}

/// The preflight: a session started and closed against a runtime that keeps every rule.
const PREFLIGHT: Scenario = Scenario {
    name: "preflight",
    checks: &[],
    layers: super::layers::Stack::default,
    ops: || vec![super::driver::Op::Start, super::driver::Op::Close],
    judge: |_| Vec::new(),
    after: super::after::After::Nothing,
    suite: Suite::Contract,
    app: super::scenario::App::LeftOut("the preflight"),
};

/// `Err` when the client cannot even start a session against a runtime that keeps every rule
/// (its driver does not start, dies, or fails the start): a usage error with the driver's own
/// words, not a report of checks that are all untestable for one reason.
fn preflight(client: &[OsString], opts: &Options) -> Result<(), String> {
    let Some((obs, stderr)) = scenario(&PREFLIGHT, client, opts)? else {
        return Ok(());
    };
    let outcome = obs.ops.first().map(|(_, o, _)| o);
    if let Some(Outcome::Ok(_)) = outcome {
        return Ok(());
    }
    let what = match outcome {
        Some(Outcome::DriverEnded(why)) => format!(
            "its driver ended before answering the start: {}",
            why.split("; stderr:").next().unwrap_or(why)
        ),
        Some(Outcome::TimedOut) => format!("the start took longer than {:?}", opts.op_timeout),
        Some(o) => format!("the start failed: {}", o.describe()),
        None => "the start was never sent".into(),
    };
    let tail = match last_lines(&stderr, 12, "\n  ").trim() {
        "" => String::new(),
        t => format!("\nits stderr ends:\n  {t}"),
    };
    Err(format!(
        "the client did not start a session against a runtime that keeps every rule, so no check could be judged: {what}{tail}"
    ))
}

/// Runs the selected scenarios against `client` (argv, `{runtime}` replaced by the shim), after
/// a preflight: `Err` when the client cannot start a session against a runtime that keeps every
/// rule.
pub fn run(client: &[OsString], opts: &Options) -> Result<Report, String> {
    let started = Instant::now();
    preflight(client, opts)?;
    let mut verdicts = Vec::new();
    for s in select(&opts.scenarios, opts.suite)? {
        let t = Instant::now();
        let judged = || -> Result<Option<Vec<Verdict>>, String> {
            let Some((obs, stderr)) = scenario(s, client, opts)? else {
                return Ok(None);
            };
            let Some(verdicts) = measured(s, &obs, client, opts)? else {
                return Ok(None);
            };
            Ok(Some(evidenced(&obs, verdicts, s.name, &obs.peers, &stderr)))
        };
        judge_confirmed(&mut verdicts, s.checks, opts, t, judged)?;
    }
    Ok(report(client, verdicts, opts, started, None))
}

/// The scenario's verdicts on `obs`; when the long line's run got no result within its bound,
/// with how the client's time grows on shorter lines ([`super::growth`]). `None`: the run was
/// stopped.
fn measured(
    s: &Scenario,
    obs: &Observation,
    client: &[OsString],
    opts: &Options,
) -> Result<Option<Vec<Verdict>>, String> {
    // An operation the driver says the client cannot do decides every check of the scenario,
    // in one place for all of them; else the judges decide from what was observed.
    let mut verdicts = match super::judges::unsupported(obs) {
        Some(v) => vec![v; s.checks.len()],
        None => s.verdicts(obs),
    };
    let timed_out = matches!(obs.ops.get(1), Some((_, Outcome::TimedOut, _)));
    if s.name == "long-lines" && timed_out {
        let run = |p: &Scenario| Ok(scenario(p, client, opts)?.map(|(o, _)| o));
        let Some(g) = super::growth::measure(opts.op_timeout, run)? else {
            return Ok(None);
        };
        verdicts[0] =
            super::growth::explained(std::mem::replace(&mut verdicts[0], Verdict::Pass), &g);
    }
    Ok(Some(verdicts))
}

/// A scenario's verdicts with their evidence; its observation printed under `DSH_CLIENT_DEBUG`.
pub(crate) fn evidenced(
    obs: &impl std::fmt::Debug,
    verdicts: Vec<Verdict>,
    name: &str,
    peers: &[super::log::PeerLog],
    stderr: &str,
) -> Vec<Verdict> {
    if std::env::var_os("DSH_CLIENT_DEBUG").is_some() {
        eprintln!("{obs:#?}");
    }
    (verdicts.into_iter())
        .map(|v| super::log::with_evidence(v, name, peers, stderr))
        .collect()
}

/// Adds a scenario's verdicts for `checks` ([`confirmed`]) to `verdicts`, timed from `t`, or
/// NOT RUN when the run was stopped.
pub(crate) fn judge_confirmed(
    verdicts: &mut Vec<(CheckId, Verdict, Duration)>,
    checks: &[CheckId],
    opts: &Options,
    t: Instant,
    judged: impl FnMut() -> Result<Option<Vec<Verdict>>, String>,
) -> Result<(), String> {
    match confirmed(checks, judged)? {
        Some(vs) => verdicts.extend(checks.iter().zip(vs).map(|(id, v)| (*id, v, t.elapsed()))),
        None => not_run(verdicts, checks, opts),
    }
    Ok(())
}

/// A scenario's verdicts (`None`: the run was stopped), `judged` once — twice when a memory
/// measurement failed ([`super::memory::CHECKS`]): a resident size read on a busy machine may grow
/// with what else runs there, so the failure stands only when a second run confirms it (or cannot
/// judge: then the first run's verdict is all there is). The second run decides the memory
/// checks only: the scenario's other checks keep the first run's verdicts (a rerun on a busy
/// machine judges them no better).
pub(crate) fn confirmed(
    checks: &[CheckId],
    mut judged: impl FnMut() -> Result<Option<Vec<Verdict>>, String>,
) -> Result<Option<Vec<Verdict>>, String> {
    let Some(first) = judged()? else {
        return Ok(None);
    };
    let memory_failed = checks
        .iter()
        .zip(&first)
        .any(|(id, v)| super::memory::CHECKS.contains(id) && matches!(v, Verdict::Fail(_)));
    if !memory_failed {
        return Ok(Some(first));
    }
    let Some(again) = judged()? else {
        return Ok(None);
    };
    let judged = |v: &Verdict| matches!(v, Verdict::Pass | Verdict::Fail(_));
    Ok(Some(
        (checks.iter().zip(first).zip(again))
            .map(
                |((id, one), two)| match super::memory::CHECKS.contains(id) && judged(&two) {
                    true => two,
                    false => one,
                },
            )
            .collect(),
    ))
}

/// A scenario that was not run, or not to its end, because the run was stopped: its checks NOT
/// RUN (a check another scenario passed is then NOT RUN too: it was not judged whole).
pub(crate) fn not_run(
    verdicts: &mut Vec<(CheckId, Verdict, Duration)>,
    checks: &[CheckId],
    opts: &Options,
) {
    let halt = opts.cancel.halted().unwrap_or(Halt::Signal(libc::SIGINT));
    for id in checks {
        verdicts.push((*id, Verdict::NotRun(halt), Duration::ZERO));
    }
}

/// The report of a client run: one verdict per check (the worst its scenarios gave), the
/// baseline applied, and why the run stopped if it did.
pub(crate) fn report(
    client: &[OsString],
    verdicts: Vec<(CheckId, Verdict, Duration)>,
    opts: &Options,
    started: Instant,
    hint: Option<String>,
) -> Report {
    let mut results: Vec<CheckResult> = worst(verdicts)
        .into_iter()
        .map(|(id, verdict, duration)| CheckResult {
            info: *id.info(),
            verdict: baseline(verdict, id.as_str(), &opts.baseline),
            duration,
        })
        .collect();
    results.sort_by_key(|r| r.info.id);
    let stopped = opts.cancel.halted().map(|halt| {
        let judged = results
            .iter()
            .filter(|r| !matches!(r.verdict, Verdict::NotRun(_)))
            .count();
        Stopped {
            halt,
            cause: format!(
                "The report holds the {judged} of {} checks judged before it.",
                results.len()
            ),
            stderr_tail: String::new(),
            after: started.elapsed(),
        }
    });
    Report {
        runtime: client
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        edition: Edition::Current,
        results,
        duration: started.elapsed(),
        hint,
        stopped,
        should_fail: opts.should_fail,
        start: None,
    }
}

/// One verdict per check: of those several scenarios decide, the first failure, else the first
/// UNTESTABLE (part of its situation never arose), else a pass, else a SKIP (a scenario whose
/// operation the client does not support, or whose situation it cannot meet, takes nothing from
/// what the others judged); their durations added.
pub(crate) fn worst(all: Vec<(CheckId, Verdict, Duration)>) -> Vec<(CheckId, Verdict, Duration)> {
    let rank = |v: &Verdict| match v {
        Verdict::Fail(_) => 0,
        Verdict::Pass => 2,
        Verdict::Skip { .. } => 3,
        _ => 1,
    };
    let mut out: Vec<(CheckId, Verdict, Duration)> = Vec::new();
    for (id, v, d) in all {
        match out.iter_mut().find(|x| x.0 == id) {
            Some(x) => {
                x.2 += d;
                if rank(&v) < rank(&x.1) {
                    x.1 = v;
                }
            }
            None => out.push((id, v, d)),
        }
    }
    out
}

pub(crate) fn baseline(v: Verdict, id: &str, b: &Baseline) -> Verdict {
    match (v, b.reason(id)) {
        (Verdict::Fail(failure), Some(r)) => Verdict::KnownFailing {
            failure,
            baseline: r.to_owned(),
        },
        (Verdict::Pass, Some(r)) => Verdict::StaleBaseline {
            baseline: r.to_owned(),
        },
        (v, _) => v,
    }
}

/// Writes the shim: a `dsh` that re-invokes the kit as a peer connected to `port`.
fn shim(dir: &Path, kit: &Path, port: u16) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    let path = dir.join("dsh");
    let quoted = kit.display().to_string().replace('\'', "'\\''");
    std::fs::write(
        &path,
        format!("#!/bin/sh\nexec '{quoted}' client-peer --port {port} -- \"$@\"\n"),
    )?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

/// A scenario's world: its directories, the peers' log (served by the kit), and the client's
/// argv and environment with the shim in them.
pub(crate) struct Setup {
    pub dirs: CaseDirs,
    /// The scenario's start: the peers' logs and the memory samples count from it.
    pub t0: Instant,
    pub peers: Peers,
    pub cmd: CommandSpec,
    pub env: Vec<(String, String)>,
}

/// Starts a scenario's client (`what`: "client" or "app"), bounded in what it may write.
pub(crate) fn spawn(
    what: &str,
    cmd: &CommandSpec,
    dirs: &CaseDirs,
    env: &[(String, String)],
) -> Result<Child, String> {
    let limit = StdoutLimit::per_process(100_000, 256 << 20);
    Child::spawn(cmd, dirs, env, 64 << 20, &limit)
        .map_err(|e| format!("cannot start the {what} {cmd}: {e}"))
}

/// Makes a scenario's directories and shim and starts serving its peers behind `layers`;
/// `{runtime}` in `client` becomes the shim, and each `(placeholder, value)` of `more` too.
pub(crate) fn setup(
    name: &str,
    layers: super::peer::Layers,
    client: &[OsString],
    kit: &Path,
    more: &[(&str, &str)],
) -> Result<Setup, String> {
    let dirs = CaseDirs::new(false)
        .map_err(|e| format!("cannot create the scenario's directories: {e}"))?;
    for sub in ["a", "b"] {
        let _ = std::fs::create_dir_all(dirs.cwd.join(sub));
    }
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let bin = dirs.root().join("bin");
    let dsh = shim(&bin, kit, port).map_err(|e| format!("cannot write the shim: {e}"))?;
    let peers: Peers = Default::default();
    let t0 = Instant::now();
    super::peer::serve(listener, peers.clone(), layers, t0);
    let shim_path = dsh.display().to_string();
    let pairs: Vec<(&str, &str)> = [(PLACEHOLDER, shim_path.as_str())]
        .into_iter()
        .chain(more.iter().copied())
        .collect();
    let argv: Vec<OsString> = client.iter().map(|a| substitute(a, &pairs)).collect();
    let cmd = CommandSpec::from_argv(&argv).ok_or("no client command")?;
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = vec![
        ("DSH_BIN".to_owned(), shim_path),
        ("PATH".to_owned(), path),
        ("DSH_CONFORMANCE_SCENARIO".to_owned(), name.to_owned()),
    ];
    Ok(Setup {
        dirs,
        t0,
        peers,
        cmd,
        env,
    })
}

/// `arg` with each `(placeholder, value)` replaced, byte-wise: an argument that is not UTF-8
/// (a legal Unix path) passes through with its placeholders replaced too.
fn substitute(arg: &OsStr, pairs: &[(&str, &str)]) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut bytes = arg.as_bytes().to_vec();
    for (k, v) in pairs {
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = &bytes[..];
        while let Some(i) = rest.windows(k.len()).position(|w| w == k.as_bytes()) {
            out.extend_from_slice(&rest[..i]);
            out.extend_from_slice(v.as_bytes());
            rest = &rest[i + k.len()..];
        }
        out.extend_from_slice(rest);
        bytes = out;
    }
    OsString::from_vec(bytes)
}

/// Runs one scenario: what the kit saw, and the end of the client's stderr; `None` when the run
/// was stopped before the scenario's end.
fn scenario(
    s: &Scenario,
    client: &[OsString],
    opts: &Options,
) -> Result<Option<(Observation, String)>, String> {
    if opts.cancel.halted().is_some() {
        return Ok(None);
    }
    let Setup {
        dirs,
        t0,
        peers,
        cmd,
        env,
    } = setup(s.name, s.layers, client, &opts.kit, &[])?;
    let mut child = spawn("client", &cmd, &dirs, &env)?;
    let sampler =
        super::memory::sampled(s.checks).then(|| super::memory::Sampler::start(child.pid(), t0));
    let mut ops = Vec::new();
    for (i, op) in s.all_ops().into_iter().enumerate() {
        let t = Instant::now();
        let mut line = op.to_json();
        line["id"] = (i + 1).into();
        child.write(format!("{line}\n").into_bytes());
        let out = await_result(&mut child, i + 1, op_bound(&op, opts), opts);
        if opts.cancel.halted().is_some() {
            child.kill();
            return Ok(None);
        }
        let stop = !matches!(out, Outcome::Ok(_) | Outcome::Err(_));
        ops.push((op, out, t.elapsed()));
        if stop {
            break;
        }
    }
    let rss = sampler.map(|s| s.finish()).unwrap_or_default();
    child.close_stdin();
    let until = Instant::now() + Duration::from_secs(3);
    while child.try_exit().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the last peer's exit reach the log.
    std::thread::sleep(Duration::from_millis(100));
    child.kill();
    std::thread::sleep(Duration::from_millis(50));
    // A signal that reached the client too (a terminal's Ctrl-C) may have ended it first.
    if opts.cancel.halted().is_some() {
        return Ok(None);
    }
    let peers = peers.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(Some((
        Observation { peers, ops, rss },
        child.stderr_tail().0,
    )))
}

/// How long the kit waits for an operation's result: `--timeout`; for a run given a bound, that
/// bound and [`super::runs::RUN_GRACE`], whatever `--timeout` (a client that has no bound is
/// run unbounded by its driver, and seen hanging).
fn op_bound(op: &super::driver::Op, opts: &Options) -> Duration {
    match op {
        super::driver::Op::RunBounded { timeout_ms, .. } => {
            Duration::from_millis(*timeout_ms) + super::runs::RUN_GRACE
        }
        _ => opts.op_timeout,
    }
}

/// The driver's result for operation `id`, within `bound`; a stopped run ends the wait within
/// [`POLL`].
fn await_result(child: &mut Child, id: usize, bound: Duration, opts: &Options) -> Outcome {
    let until = Instant::now() + bound;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || opts.cancel.halted().is_some() {
            return Outcome::TimedOut;
        }
        match child.events.recv_timeout(left.min(POLL)) {
            Ok(ev) => {
                child.consumed(&ev);
                match ev {
                    Event::Line(o) => {
                        let Ok(v) = serde_json::from_str::<serde_json::Value>(o.text()) else {
                            continue;
                        };
                        if v["id"] == id {
                            return Outcome::parse(&v);
                        }
                    }
                    Event::Closed(_) | Event::Flooded(_) => {
                        return Outcome::DriverEnded(format!(
                            "its stdout ended{}; stderr: {}",
                            exited(child),
                            tail(child)
                        ));
                    }
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(_) => return Outcome::DriverEnded("its stdout ended".into()),
        }
    }
}

/// How the driver ended, when it exits within a moment of its stdout's end (" (exit code 1)").
fn exited(child: &mut Child) -> String {
    let until = Instant::now() + Duration::from_millis(500);
    loop {
        if let Some(e) = child.try_exit() {
            return format!(" ({e})");
        }
        if Instant::now() >= until {
            return String::new();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn tail(child: &Child) -> String {
    last_lines(&child.stderr_tail().0, 5, " | ")
}

/// The last `n` lines of `text`, joined by `sep`.
fn last_lines(text: &str, n: usize, sep: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(sep)
}

#[cfg(test)]
mod tests {
    #[test]
    fn substitute_replaces_every_placeholder_also_in_an_argument_that_is_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let arg = OsStr::from_bytes(b"\xff{runtime}:{runtime}/{prompt}");
        let out = substitute(arg, &[(PLACEHOLDER, "/shim"), ("{prompt}", "hi")]);
        assert_eq!(out.as_bytes(), b"\xff/shim:/shim/hi");
        assert_eq!(
            substitute(OsStr::new("plain"), &[(PLACEHOLDER, "x")]),
            "plain"
        );
    }

    use super::*;
    use crate::suite::verdict::{Failure, FailureKind};

    #[test]
    fn a_check_several_scenarios_decide_gets_the_worst_verdict() {
        let id = CheckId::ClientGracefulShutdown;
        let t = Duration::from_millis(1);
        let no = || Verdict::NotTestable { reason: "r".into() };
        let fail = || Verdict::Fail(Box::new(Failure::new(FailureKind::Rule, "f")));
        let one = |vs: Vec<Verdict>| worst(vs.into_iter().map(|v| (id, v, t)).collect());
        assert_eq!(one(vec![Verdict::Pass, Verdict::Pass])[0].1, Verdict::Pass);
        assert_eq!(one(vec![Verdict::Pass, no(), Verdict::Pass])[0].1, no());
        let merged = one(vec![no(), Verdict::Pass, fail()]);
        assert_eq!(merged.len(), 1);
        assert!(matches!(merged[0].1, Verdict::Fail(_)));
        assert_eq!(merged[0].2, 3 * t);
        // A scenario the client does not support takes nothing from another's verdict.
        let skip = || Verdict::Skip { reason: "s".into() };
        assert_eq!(one(vec![skip(), Verdict::Pass])[0].1, Verdict::Pass);
        assert_eq!(one(vec![Verdict::Pass, skip()])[0].1, Verdict::Pass);
        assert_eq!(one(vec![skip(), no()])[0].1, no());
        assert_eq!(one(vec![skip(), skip()])[0].1, skip());
    }

    #[test]
    fn a_failed_memory_measurement_stands_only_when_a_second_run_confirms_it() {
        let fail = |r: &str| Verdict::Fail(Box::new(Failure::new(FailureKind::Rule, r)));
        let no = || Verdict::NotTestable { reason: "r".into() };
        let memory = [CheckId::ClientBoundedBacklog];
        // Each run's verdicts in turn; the verdicts kept and how many runs it took.
        let runs = |checks: &[CheckId], seq: Vec<Vec<Verdict>>| {
            let mut seq = seq.into_iter();
            let mut n = 0;
            let got = confirmed(checks, || {
                n += 1;
                Ok(seq.next())
            });
            (got.unwrap(), n)
        };
        let (got, n) = runs(&memory, vec![vec![fail("busy")], vec![Verdict::Pass]]);
        assert_eq!((got, n), (Some(vec![Verdict::Pass]), 2));
        let (got, n) = runs(&memory, vec![vec![fail("a")], vec![fail("b")]]);
        assert_eq!((got, n), (Some(vec![fail("b")]), 2));
        let (got, n) = runs(&memory, vec![vec![fail("a")], vec![no()]]);
        assert_eq!((got, n), (Some(vec![fail("a")]), 2));
        let (got, n) = runs(&memory, vec![vec![Verdict::Pass], vec![fail("never run")]]);
        assert_eq!((got, n), (Some(vec![Verdict::Pass]), 1));
        // The second run decides the memory check only: a long line it failed to read (on a
        // busy machine) neither fails the check the first run passed nor confirms the memory.
        let blocked = Verdict::Blocked {
            by: vec![CheckId::ClientLongLines],
        };
        let line = [CheckId::ClientLongLines, CheckId::ClientLineMemory];
        let (got, n) = runs(
            &line,
            vec![
                vec![Verdict::Pass, fail("17x")],
                vec![fail("timed out"), blocked],
            ],
        );
        assert_eq!((got, n), (Some(vec![Verdict::Pass, fail("17x")]), 2));
        let (got, _) = runs(
            &line,
            vec![
                vec![Verdict::Pass, fail("busy")],
                vec![fail("timed out"), Verdict::Pass],
            ],
        );
        assert_eq!(got, Some(vec![Verdict::Pass, Verdict::Pass]));
        // Another check's failure is judged once.
        let other = [CheckId::ClientLongLines];
        let (got, n) = runs(&other, vec![vec![fail("a")], vec![Verdict::Pass]]);
        assert_eq!((got, n), (Some(vec![fail("a")]), 1));
        // Stopped during the second run: not run.
        let (got, n) = runs(&memory, vec![vec![fail("a")]]);
        assert_eq!((got, n), (None, 2));
    }
}
