//! App mode (`dsh-conformance client --app -- <app command>`, docs/CONTRACT.md#s15.8): no
//! driver. Each scenario runs the app once on one prompt, given as the `{prompt}` argument, in
//! `DSH_CONFORMANCE_PROMPT` and on stdin (then closed); the app is to print the reply on stdout
//! and exit 0, or exit non-zero with an error on stderr when the run fails. The kit judges the
//! wire (as in driver mode), the app's output and its exit code; checks that need a driver's
//! result are not judged (the report's hint names them), never a pass.

use super::layers::{self, Stack};
use super::log::{PeerEvent, PeerLog};
use super::robust;
use super::run::{baseline, setup, Options, Setup, Suite};
use super::scenario::{self as sc, fail, untestable, Observation};
use crate::check::CheckId;
use crate::edition::Edition;
use crate::runner::{Child, Event, StdoutLimit};
use crate::suite::{CheckResult, Report, Verdict};
use crate::trace::ExitInfo;
use std::time::{Duration, Instant};

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
}

/// One app scenario: a driver-mode scenario's layers, a prompt, its checks' judges.
pub struct AppScenario {
    /// Its name (`--scenario`), as in driver mode.
    pub name: &'static str,
    /// The checks it decides.
    pub checks: &'static [CheckId],
    /// The peer's layers.
    pub layers: fn() -> Stack,
    /// The prompt the app is given.
    pub prompt: &'static str,
    /// Its verdicts, one per check.
    pub judge: fn(&AppObservation) -> Vec<Verdict>,
    /// Its suite.
    pub suite: Suite,
}

/// The report's note on the checks app mode leaves out.
fn not_judged() -> String {
    let what: Vec<String> = NOT_JUDGED
        .iter()
        .map(|(id, needs)| format!("{id} ({needs})"))
        .collect();
    format!(
        "app mode does not judge {}: they need a driver's result",
        what.join(", ")
    )
}

/// Checks app mode cannot judge (left out of its report, named in its hint), with why.
pub const NOT_JUDGED: &[(CheckId, &str)] = &[
    (CheckId::ClientIdsOutOfOrder, "concurrent requests"),
    (
        CheckId::ClientTypedErrors,
        "an error response's code as the client reports it",
    ),
];

fn wire(o: &AppObservation) -> Observation {
    Observation {
        peers: o.peers.clone(),
        ops: Vec::new(),
    }
}

/// The app printed `text` and exited 0.
fn completes(o: &AppObservation, text: &str, what: &str) -> Verdict {
    if !prompted(o) {
        let how = o.exit.map_or("was still running at the bound".into(), |c| {
            format!("exited {c}")
        });
        return untestable(format!(
            "the app never sent a prompt to the runtime (it {how})"
        ));
    }
    let printed = o.stdout.iter().any(|l| l.contains(text));
    match o.exit {
        None => fail(format!("{what}; the app never exited: it hangs")),
        Some(0) if printed => Verdict::Pass,
        Some(c) => fail(format!(
            "{what}; the app exited {c} without printing {text:?} (stdout {:?}, stderr {:?})",
            o.stdout.join("\n"),
            o.stderr.trim_end()
        )),
    }
}

/// The banner comes before the `initialize` answer: an app that launched the runtime met it,
/// prompt or not.
fn non_frame_lines(o: &AppObservation) -> Verdict {
    let launched = o.peers.iter().any(|p| {
        p.requests()
            .iter()
            .any(|(_, r)| r["method"] == "initialize")
    });
    match (launched, prompted(o)) {
        (true, false) => fail(format!(
            "{}; the app never prompted: it {} (stderr {:?})",
            robust::NON_FRAME,
            o.exit.map_or("hangs".into(), |c| format!("exited {c}")),
            o.stderr.trim_end()
        )),
        _ => completes(o, "after non-frame lines", robust::NON_FRAME),
    }
}

fn prompted(o: &AppObservation) -> bool {
    o.peers.iter().any(|p| {
        p.requests()
            .iter()
            .any(|(_, r)| r["method"] == "session/prompt")
    })
}

/// The app failed: a non-zero exit and a word on stderr, within the bound.
fn fails(o: &AppObservation, happened: PeerEvent, what: &str) -> Verdict {
    if !o
        .peers
        .iter()
        .any(|p| p.events.iter().any(|(_, e)| *e == happened))
    {
        return untestable(format!("the app never prompted, so {what} never happened"));
    }
    match o.exit {
        None => fail(format!("{what}; the app never exited: it hangs")),
        Some(0) => fail(format!(
            "{what}; the app exited 0 as if the run had succeeded"
        )),
        Some(c) if o.stderr.trim().is_empty() => {
            fail(format!("{what}; the app exited {c} with nothing on stderr"))
        }
        Some(_) => Verdict::Pass,
    }
}

fn shutdown(o: &AppObservation) -> Verdict {
    match o.exit {
        None => untestable("the app did not exit by itself within the bound"),
        Some(_) => sc::shutdown_of(&o.peers),
    }
}

/// Every app scenario.
pub const APP_SCENARIOS: &[AppScenario] = &[
    AppScenario {
        name: "handshake",
        checks: &[
            CheckId::ClientWaitsForInitialize,
            CheckId::ClientGracefulShutdown,
        ],
        layers: || Stack(vec![Box::new(layers::SlowInit::new(1500))]),
        prompt: "reply: hello",
        judge: |o| vec![sc::waits_for_initialize(&wire(o)), shutdown(o)],
        suite: Suite::Contract,
    },
    AppScenario {
        name: "foreign-sessions",
        checks: &[CheckId::ClientRootIdle],
        layers: || Stack(vec![Box::new(layers::Foreign::default())]),
        prompt: "reply: the root's reply",
        judge: |o| {
            vec![completes(
                o,
                "the root's reply",
                "a turn of another session was interleaved",
            )]
        },
        suite: Suite::Contract,
    },
    AppScenario {
        name: "unknown-events",
        checks: &[CheckId::ClientForwardCompatible],
        layers: || Stack(vec![Box::new(layers::UnknownEvents::default())]),
        prompt: "reply: still here",
        judge: |o| {
            vec![completes(
                o,
                "still here",
                "events of an unknown type were streamed",
            )]
        },
        suite: Suite::Contract,
    },
    AppScenario {
        name: "long-lines",
        checks: &[CheckId::ClientLongLines],
        layers: || Stack(vec![Box::new(layers::LongLines { bytes: 48 << 20 })]),
        prompt: "reply: after a long line",
        judge: |o| {
            vec![completes(
                o,
                "after a long line",
                "the reply's frame was a 48 MiB line",
            )]
        },
        suite: Suite::Contract,
    },
    AppScenario {
        name: "exit-mid-turn",
        checks: &[CheckId::ClientRuntimeExit],
        layers: || Stack(vec![Box::new(layers::ExitMidTurn::default())]),
        prompt: "reply: never finished",
        judge: |o| {
            vec![fails(
                o,
                PeerEvent::Exit(1),
                "the runtime exited mid-turn (code 1)",
            )]
        },
        suite: Suite::Contract,
    },
    AppScenario {
        name: "stderr-flood",
        checks: &[CheckId::ClientDrainsStderr],
        layers: || Stack(vec![Box::new(layers::StderrFlood { bytes: 256 * 1024 })]),
        prompt: "reply: after much stderr",
        judge: |o| {
            vec![sc::stderr_blocked(
                &o.peers,
                completes(o, "after much stderr", sc::FLOOD),
            )]
        },
        suite: Suite::Contract,
    },
    AppScenario {
        name: "non-frame-lines",
        checks: &[CheckId::ClientRobustNonFrameLines],
        layers: || Stack(vec![Box::new(robust::NonFrameLines)]),
        prompt: "reply: after non-frame lines",
        judge: |o| vec![non_frame_lines(o)],
        suite: Suite::Robustness,
    },
    AppScenario {
        name: "stdout-closed",
        checks: &[CheckId::ClientRobustStdoutClosed],
        layers: || Stack(vec![Box::new(robust::StdoutClosed::default())]),
        prompt: "reply: never read",
        judge: |o| vec![fails(o, PeerEvent::StdoutClosed, robust::CLOSED)],
        suite: Suite::Robustness,
    },
];

fn selected(opts: &Options) -> Result<Vec<&'static AppScenario>, String> {
    if let Some(bad) = opts
        .scenarios
        .iter()
        .find(|n| !APP_SCENARIOS.iter().any(|s| s.name == n.as_str()))
    {
        let all: Vec<_> = APP_SCENARIOS.iter().map(|s| s.name).collect();
        return Err(format!(
            "no app scenario {bad:?} (app scenarios: {})",
            all.join(", ")
        ));
    }
    Ok(APP_SCENARIOS
        .iter()
        .filter(|s| match opts.scenarios.is_empty() {
            true => opts.suite == Suite::All || opts.suite == s.suite,
            false => opts.scenarios.iter().any(|n| n == s.name),
        })
        .collect())
}

/// Runs the selected app scenarios against `app` (argv; `{runtime}` and `{prompt}` replaced).
pub fn run(app: &[String], opts: &Options) -> Result<Report, String> {
    let started = Instant::now();
    let mut results = Vec::new();
    let push = |results: &mut Vec<CheckResult>, id: CheckId, v: Verdict, t: Duration| {
        results.push(CheckResult {
            info: *id.info(),
            verdict: baseline(v, id.as_str(), &opts.baseline),
            duration: t,
        })
    };
    let scenarios = selected(opts)?;
    for s in &scenarios {
        let t = Instant::now();
        let obs = scenario(s, app, opts)?;
        if std::env::var_os("DSH_CLIENT_DEBUG").is_some() {
            eprintln!("{obs:#?}");
        }
        for (id, v) in s.checks.iter().zip((s.judge)(&obs)) {
            push(&mut results, *id, v, t.elapsed());
        }
    }
    results.sort_by_key(|r| r.info.id);
    Ok(Report {
        runtime: app.join(" "),
        edition: Edition::Current,
        results,
        duration: started.elapsed(),
        hint: (opts.scenarios.is_empty() && opts.suite != Suite::Robustness).then(not_judged),
        stopped: None,
        should_fail: opts.should_fail,
    })
}

fn scenario(s: &AppScenario, app: &[String], opts: &Options) -> Result<AppObservation, String> {
    let Setup {
        dirs,
        peers,
        cmd,
        mut env,
    } = setup(s.name, s.layers, app, &opts.kit, &[(PROMPT, s.prompt)])?;
    env.push(("DSH_CONFORMANCE_PROMPT".to_owned(), s.prompt.to_owned()));
    let mut child = Child::spawn(
        &cmd,
        &dirs,
        &env,
        64 << 20,
        &StdoutLimit::per_process(100_000, 256 << 20),
    )
    .map_err(|e| format!("cannot start the app {cmd}: {e}"))?;
    child.write(format!("{}\n", s.prompt).into_bytes());
    child.close_stdin();
    let until = Instant::now() + opts.op_timeout;
    let mut stdout = Vec::new();
    while let Ok(ev) = child
        .events
        .recv_timeout(until.saturating_duration_since(Instant::now()))
    {
        child.consumed(&ev);
        match ev {
            Event::Line(o) => stdout.push(o.text().to_owned()),
            Event::Closed(_) | Event::Flooded(_) => break,
        }
    }
    let exit = loop {
        match child.try_exit() {
            Some(ExitInfo::Code(c)) => break Some(c),
            Some(_) => break Some(-1),
            None if Instant::now() >= until => break None,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    // Let the last peer's exit reach the log.
    std::thread::sleep(Duration::from_millis(100));
    child.kill();
    let stderr = child.stderr_tail().0;
    std::thread::sleep(Duration::from_millis(50));
    let peers = peers.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(AppObservation {
        peers,
        exit,
        stdout,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: Option<i32>, stderr: &str) -> AppObservation {
        let peer = PeerLog {
            n: 1,
            argv: Vec::new(),
            events: vec![(Duration::ZERO, PeerEvent::Exit(1))],
        };
        AppObservation {
            peers: vec![peer],
            exit: code,
            stdout: Vec::new(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn a_runtime_exit_must_end_the_app_non_zero_with_an_error() {
        let judge = |o: &AppObservation| fails(o, PeerEvent::Exit(1), "exit");
        assert_eq!(judge(&exited(Some(1), "app: gone")), Verdict::Pass);
        assert!(matches!(judge(&exited(Some(0), "")), Verdict::Fail(_)));
        assert!(matches!(judge(&exited(Some(1), "")), Verdict::Fail(_)));
        assert!(matches!(judge(&exited(None, "")), Verdict::Fail(_)));
        let mut quiet = exited(Some(1), "x");
        quiet.peers[0].events.clear();
        assert!(matches!(judge(&quiet), Verdict::NotTestable { .. }));
    }

    #[test]
    fn a_printed_reply_without_a_prompt_to_the_runtime_is_untestable() {
        let mut o = exited(Some(0), "");
        o.stdout = vec!["hello".into()];
        assert!(matches!(
            completes(&o, "hello", "w"),
            Verdict::NotTestable { .. }
        ));
        let prompt = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}"#;
        o.peers[0]
            .events
            .push((Duration::ZERO, PeerEvent::Received(prompt.into())));
        assert_eq!(completes(&o, "hello", "w"), Verdict::Pass);
        o.exit = Some(3);
        assert!(matches!(completes(&o, "hello", "w"), Verdict::Fail(_)));
    }
}
