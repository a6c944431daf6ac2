//! `dsh-conformance client`: runs each scenario against the client under test (the I/O around
//! [`super::scenario`]): a fresh `DSH_HOME` and workspace, the shim the client launches as its
//! runtime, the peers, the driver's operations and bounded waits; the report is `verdicts.rs`'s.

use super::driver::Outcome;
use super::log::Peers;
use super::scenario::{Observation, Scenario, SCENARIOS};
use super::verdicts::{evidenced, judge_confirmed, report};
use crate::runner::{CaseDirs, Child, CommandSpec, Event, StdoutLimit};
use crate::suite::{Baseline, Report, Verdict};
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
    use super::*;

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
}
