//! `client`: the kit plays the runtime and judges a client (docs/CONTRACT.md#s15); and the
//! hidden modes it uses, `client-peer` (the shim's runtime), `client-driver` (the reference
//! client behind the driver protocol) and `client-app` (the reference app).

use crate::args::duration;
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
    /// List the client checks (id, severity, section, the scenarios of each suite that decide
    /// it, whether app mode judges it, the rule) instead of running; human or json.
    #[arg(long)]
    list: bool,
    /// The client's driver command; `{runtime}` in it is replaced by the runtime to launch.
    #[arg(last = true, required_unless_present = "list")]
    cmd: Vec<std::ffi::OsString>,
}

/// One client check as `client --list` gives it, from the scenario tables themselves.
fn listed(c: &dsh_conformance::suite::CheckInfo) -> serde_json::Value {
    use dsh_conformance::client::app::APP_SCENARIOS;
    let suites = [
        (run::Suite::Contract, "contract"),
        (run::Suite::Robustness, "robustness"),
    ];
    let scenarios: Vec<serde_json::Value> = (suites.iter())
        .flat_map(|(suite, name)| {
            (suite.scenarios().into_iter())
                .filter(|s| s.checks.contains(&c.id))
                .map(move |s| serde_json::json!({"name": s.name, "suite": name}))
        })
        .collect();
    let app = APP_SCENARIOS.iter().any(|s| s.checks.contains(&c.id));
    serde_json::json!({
        "id": c.id, "severity": c.severity.to_string(), "section": c.section,
        "scenarios": scenarios, "app": app, "rule": c.rule,
    })
}

/// `client --list`: every client check, as a table or JSON.
fn list(a: &ClientArgs) -> i32 {
    use dsh_conformance::check::{self, Subject};
    let rows: Vec<serde_json::Value> = check::of(Subject::Client).map(listed).collect();
    let text = match a.format {
        Format::Human => {
            let mut t = String::new();
            for r in &rows {
                let scenarios: Vec<String> = (r["scenarios"].as_array().into_iter().flatten())
                    .map(|s| {
                        format!(
                            "{} ({})",
                            s["name"].as_str().unwrap_or(""),
                            s["suite"].as_str().unwrap_or("")
                        )
                    })
                    .collect();
                let app = if r["app"] == true {
                    "app: yes"
                } else {
                    "app: no"
                };
                t.push_str(&format!(
                    "{:<30} {:<6} {:<7} {:<9} {}\n    {}\n",
                    r["id"].as_str().unwrap_or(""),
                    r["severity"].as_str().unwrap_or(""),
                    r["section"].as_str().unwrap_or(""),
                    app,
                    scenarios.join(", "),
                    r["rule"].as_str().unwrap_or(""),
                ));
            }
            t
        }
        Format::Json => format!("{:#}\n", serde_json::Value::Array(rows)),
        Format::Junit | Format::Html => {
            eprintln!(
                "dsh-conformance client --list: --format junit and html have no list form (use human or json)"
            );
            return 2;
        }
    };
    match &a.output {
        Some(p) => match std::fs::write(p, text) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!(
                    "dsh-conformance client --list: --output {}: {e}",
                    p.display()
                );
                2
            }
        },
        None => {
            dsh_conformance::out!("{text}");
            0
        }
    }
}

/// `--scenario`'s long help, listed from the scenario tables themselves (one source of truth).
fn scenario_help() -> String {
    use dsh_conformance::client::app::APP_SCENARIOS;
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
        names(APP_SCENARIOS.iter().map(|s| s.name).collect()),
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

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Human,
    Json,
    Junit,
    /// The HTML page `report --html` makes, for this run alone.
    Html,
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
        Format::Html => dsh_conformance::suite::html::page(
            &[report.json()],
            &crate::report::options("docs/CONTRACT.md"),
        ),
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
