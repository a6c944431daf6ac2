//! `client`: the kit plays the runtime and judges a client (docs/CONTRACT.md#s15); and the
//! hidden modes it uses, `client-peer` (the shim's runtime), `client-driver` (the reference
//! client behind the driver protocol) and `client-app` (the reference app).

use crate::args::{duration, Format};
use dsh_conformance::client::{reference, relay, run};
use std::time::Duration;

#[derive(clap::Args)]
pub(crate) struct ClientArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Only this scenario (repeatable); `--help` lists them.
    #[arg(long, value_name = "NAME", long_help = scenario_help())]
    scenario: Vec<String>,
    /// The scenarios run when none is named: the contract's, the robustness suite's (what the
    /// contract forbids but clients meet; never MUST), or all.
    #[arg(long, value_enum, default_value_t = SuiteArg::Contract)]
    suite: SuiteArg,
    /// App mode: the command is an app (no driver), run once per scenario on one prompt
    /// (`{prompt}`, DSH_CONFORMANCE_PROMPT, stdin); its output and exit code are judged.
    #[arg(long)]
    app: bool,
    /// The longest one driver operation (in app mode: one run of the app) may take (a hang ends its scenario).
    #[arg(long, value_name = "D", value_parser = duration, default_value = "15s", allow_negative_numbers = true)]
    timeout: Duration,
    /// A baseline of known client failures: `<check-id>  # <reason>` per line.
    #[arg(long, value_name = "FILE")]
    known_failing: Option<std::path::PathBuf>,
    /// SHOULD failures fail the run too.
    #[arg(long)]
    should_fail: bool,
    /// Show failure details.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    contract: crate::report::ContractArg,
    /// List the client checks (id, severity, section, the scenarios of each suite that decide
    /// it, whether app mode judges it, the rule) instead of running; human or json.
    #[arg(long)]
    list: bool,
    /// The client's driver command; `{runtime}` in it is replaced by the runtime to launch.
    #[arg(last = true, required_unless_present = "list")]
    cmd: Vec<std::ffi::OsString>,
}

/// One client check as `client --list` gives it, from the scenario tables themselves.
struct Listed {
    check: &'static dsh_conformance::suite::CheckInfo,
    /// The scenarios that decide it: (name, suite).
    scenarios: Vec<(&'static str, &'static str)>,
    /// Whether app mode judges it.
    app: bool,
    /// Its scenarios app mode leaves out, with why.
    left_out: Vec<(&'static str, &'static str)>,
}

impl Listed {
    fn of(check: &'static dsh_conformance::suite::CheckInfo) -> Listed {
        use dsh_conformance::client::app;
        let suites = [
            (run::Suite::Contract, "contract"),
            (run::Suite::Robustness, "robustness"),
        ];
        let scenarios = (suites.iter())
            .flat_map(|&(suite, name)| {
                (suite.scenarios().into_iter())
                    .filter(|s| s.checks.contains(&check.id))
                    .map(move |s| (s.name, name))
            })
            .collect::<Vec<_>>();
        let app_mode = app::scenarios()
            .iter()
            .any(|s| s.checks.contains(&check.id));
        let left_out = (app::left_out().into_iter())
            .filter(|l| scenarios.iter().any(|s| s.0 == l.0))
            .collect();
        Listed {
            check,
            scenarios,
            app: app_mode,
            left_out,
        }
    }

    fn human(&self) -> String {
        let c = self.check;
        let scenarios: Vec<String> = (self.scenarios.iter())
            .map(|(name, suite)| format!("{name} ({suite})"))
            .collect();
        let app = if self.app { "app: yes" } else { "app: no" };
        let (id, sev, sec) = (c.id.as_str(), c.severity.to_string(), c.section);
        let left_out: String = (self.left_out.iter())
            .map(|(name, why)| format!("    app mode leaves out {name}: {why}\n"))
            .collect();
        format!(
            "{id:<30} {sev:<6} {sec:<7} {app:<9} {}\n    {}\n{left_out}",
            scenarios.join(", "),
            c.rule
        )
    }

    fn json(&self) -> serde_json::Value {
        let c = self.check;
        let scenarios: Vec<serde_json::Value> = (self.scenarios.iter())
            .map(|(name, suite)| serde_json::json!({"name": name, "suite": suite}))
            .collect();
        let left_out: Vec<serde_json::Value> = (self.left_out.iter())
            .map(|(name, why)| serde_json::json!({"scenario": name, "why": why}))
            .collect();
        serde_json::json!({
            "id": c.id, "severity": c.severity.to_string(), "section": c.section,
            "scenarios": scenarios, "app": self.app, "app_left_out": left_out, "rule": c.rule,
        })
    }
}

/// `client --list`: every client check, as a table or JSON.
fn list(a: &ClientArgs) -> i32 {
    use dsh_conformance::check::{self, Subject};
    let rows: Vec<Listed> = check::of(Subject::Client).map(Listed::of).collect();
    crate::list::emit(
        "client --list",
        a.format,
        a.output.as_deref(),
        || rows.iter().map(Listed::human).collect(),
        || rows.iter().map(Listed::json).collect(),
    )
}

/// `--scenario`'s long help, listed from the scenario tables themselves (one source of truth).
fn scenario_help() -> String {
    use dsh_conformance::client::app::scenarios;
    let names = |s: Vec<&'static str>| s.join(", ");
    let of = |suite| {
        names(
            run::Suite::scenarios(suite)
                .iter()
                .map(|s| s.name)
                .collect(),
        )
    };
    format!(
        "Only this scenario (repeatable).\n\
         Contract suite: {}.\n\
         Robustness suite: {}.\n\
         App mode (--app): {}.",
        of(run::Suite::Contract),
        of(run::Suite::Robustness),
        names(scenarios().iter().map(|s| s.name).collect()),
    )
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SuiteArg {
    Contract,
    Robustness,
    All,
}

impl From<SuiteArg> for run::Suite {
    fn from(s: SuiteArg) -> run::Suite {
        match s {
            SuiteArg::Contract => run::Suite::Contract,
            SuiteArg::Robustness => run::Suite::Robustness,
            SuiteArg::All => run::Suite::All,
        }
    }
}

pub(crate) fn client(a: ClientArgs) -> i32 {
    if a.list {
        return list(&a);
    }
    match run_client(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dsh-conformance client: {e}");
            2
        }
    }
}

fn run_client(a: &ClientArgs) -> Result<i32, String> {
    use dsh_conformance::suite::Baseline;
    let baseline = match &a.known_failing {
        None => Baseline::default(),
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
            .and_then(|t| {
                let subject = dsh_conformance::check::Subject::Client;
                Baseline::parse(&t, &p.display().to_string(), subject)
            })?,
    };
    let opts = run::Options {
        kit: std::env::current_exe()
            .map_err(|e| format!("cannot find the kit's executable: {e}"))?,
        op_timeout: a.timeout,
        scenarios: a.scenario.clone(),
        suite: a.suite.into(),
        baseline,
        should_fail: a.should_fail,
        cancel: dsh_conformance::runner::Cancel::new(),
    };
    if let Err(e) = opts.cancel.on_signals(
        &[libc::SIGINT, libc::SIGTERM],
        "stopping the run; the partial report follows (send it again to quit at once)",
    ) {
        eprintln!("dsh-conformance client: cannot install signal handlers: {e}");
    }
    let report = if a.app {
        dsh_conformance::client::app::run(&a.cmd, &opts)?
    } else {
        run::select(&opts.scenarios, opts.suite)?;
        run::run(&a.cmd, &opts)?
    };
    let text = match a.format {
        Format::Human => report.human(a.verbose),
        Format::Json => format!("{:#}\n", report.json()),
        Format::Junit => report.junit(),
        Format::Html => dsh_conformance::suite::html::page(&[report.json()], &a.contract.options()),
    };
    match &a.output {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?
        }
        None => dsh_conformance::out!("{text}"),
    }
    eprintln!("{}", report.summary_line());
    if let Some(st) = &report.stopped {
        eprintln!("stopped: {}. {}", st.halt, st.cause);
    }
    Ok(report.exit_code())
}

/// `client-peer --port N -- ARGS…`: what the shim runs.
pub(crate) fn peer(port: u16, args: &[String]) -> i32 {
    relay::relay(port, args)
}

/// `client-driver [--bug NAME]`: the reference client, driven on stdin.
pub(crate) fn driver(bug: Option<&str>) -> i32 {
    with_bug(bug, reference::drive)
}

/// `client-app [--bug NAME]`: the reference app, one prompt.
pub(crate) fn app(bug: Option<&str>) -> i32 {
    with_bug(bug, reference::app)
}

fn with_bug(bug: Option<&str>, f: fn(Option<reference::Bug>) -> i32) -> i32 {
    match bug.map(|b| reference::Bug::parse(b).ok_or(b)) {
        Some(Err(b)) => {
            let names: Vec<_> = reference::BUGS.iter().map(|b| b.1).collect();
            eprintln!(
                "dsh-conformance client-driver: no bug {b:?} ({})",
                names.join(", ")
            );
            2
        }
        Some(Ok(b)) => f(Some(b)),
        None => f(None),
    }
}
