//! `check`: the suite against a runtime, its arguments, and `check --list`.

use dsh_conformance::edition::Edition;
use dsh_conformance::model_stub::ModelStub;
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::suite::{self, Baseline, Report};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to FILE instead of stdout (the summary line still goes to stderr).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// List the checks (id, severity, editions, rule) and exit.
    #[arg(long)]
    list: bool,
    /// Only checks whose id contains PATTERN (or matches it as a glob with `*`).
    #[arg(long, value_name = "PATTERN")]
    filter: Option<String>,
    /// Protocol edition to check: current, 2026-08 or legacy.
    #[arg(long, default_value = "current")]
    edition: Edition,
    /// Hold the runtime to upstream's bytes where clients do not care: demand -32603 for unknown
    /// methods (not the transport-level -32601) and upstream's member order in every frame.
    #[arg(long)]
    strict_upstream: bool,
    /// Baseline of known failures: `<check-id>  # <reason>` per line; a listed check that passes fails the run.
    #[arg(long, value_name = "FILE")]
    known_failing: Option<PathBuf>,
    /// Seconds to wait for each expected frame (every deadline of the check traces scales with it).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    timeout: f64,
    /// Seconds the whole run may take (0: no bound). When spent, the run stops and the report
    /// holds the checks decided so far.
    #[arg(long, default_value_t = 300.0, allow_negative_numbers = true)]
    budget: f64,
    /// Checks run in parallel, each against its own runtime process (1–64).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Start the scripted model stub on 127.0.0.1 and give the runtime its DEEPSEEK_BASE_URL/DEEPSEEK_API_KEY.
    #[arg(long)]
    model_stub: bool,
    /// Print failure details for every failed check (human format).
    #[arg(long, short)]
    verbose: bool,
    /// The runtime command line (default: the built-in reference runtime).
    #[arg(last = true)]
    cmd: Vec<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Human,
    Json,
    Junit,
}

pub(crate) fn check(a: CheckArgs) -> i32 {
    if a.list {
        return list_checks(&a);
    }
    match run_check(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dsh-conformance check: {e}");
            2
        }
    }
}

/// The run `a` asks for, its report written where it says; the run's exit code, or why it
/// cannot run (exit 2).
fn run_check(a: &CheckArgs) -> Result<i32, String> {
    let baseline = baseline(a)?;
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(format!(
            "--timeout must be a positive number of seconds, not {}",
            a.timeout
        ));
    }
    if !(a.budget.is_finite() && a.budget >= 0.0) {
        return Err(format!(
            "--budget must be a number of seconds ≥ 0 (0: no bound), not {}",
            a.budget
        ));
    }
    // Found before the run, not after it: the report must have somewhere to go.
    let output = match &a.output {
        Some(p) => {
            let f =
                std::fs::File::create(p).map_err(|e| format!("--output {}: {e}", p.display()))?;
            Some((f, p))
        }
        None => None,
    };
    let (cmd, label) = runtime_command(a)?;
    let stub = if a.model_stub {
        let s = ModelStub::start().map_err(|e| format!("cannot start the model stub: {e}"))?;
        Some(Arc::new(s))
    } else {
        None
    };
    let budget = (a.budget > 0.0).then(|| Duration::from_secs_f64(a.budget));
    let opts = suite::run::Options {
        edition: a.edition,
        filter: a.filter.clone(),
        strict_upstream: a.strict_upstream,
        frame_timeout: Duration::from_secs_f64(a.timeout),
        jobs: usize::from(a.jobs),
        env: stub.as_ref().map(|s| s.env()).unwrap_or_default(),
        baseline,
        progress: true,
        model_stub: stub.clone().map(suite::run::StubLog::of),
        budget,
        ..suite::run::Options::default()
    };
    if let Err(e) = opts.cancel.on_signals(
        &[libc::SIGINT, libc::SIGTERM],
        "stopping the run; the partial report follows (send it again to quit at once)",
    ) {
        eprintln!("dsh-conformance check: cannot install signal handlers: {e}");
    }
    eprintln!(
        "dsh-conformance check: {label} (edition {}); run budget {} (--budget), {} s per expected frame (--timeout), {} job(s)",
        a.edition,
        budget.map_or("none".to_owned(), |b| format!("{} s", b.as_secs_f64())),
        a.timeout,
        a.jobs
    );
    let report = suite::run::run(&cmd, &label, &opts).map_err(|e| e.to_string())?;
    write_report(a, &report, output)?;
    if let Some(s) = &stub {
        if report.exit_code() != 0 && a.verbose {
            eprintln!("model stub log:\n{}", s.log_text());
        }
    }
    Ok(report.exit_code())
}

/// The baseline `--known-failing` names (none: empty).
fn baseline(a: &CheckArgs) -> Result<Baseline, String> {
    let Some(p) = &a.known_failing else {
        return Ok(Baseline::default());
    };
    std::fs::read_to_string(p)
        .map_err(|e| format!("cannot read {}: {e}", p.display()))
        .and_then(|t| Baseline::parse(&t, &p.display().to_string()))
        .map_err(|e| format!("--known-failing: {e}"))
}

/// The runtime command and its label in the report: the command after `--`, else this
/// executable's built-in reference runtime.
fn runtime_command(a: &CheckArgs) -> Result<(CommandSpec, String), String> {
    let (argv, label) = if a.cmd.is_empty() {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find its own executable: {e}"))?;
        let argv = vec![
            exe.display().to_string(),
            "runtime".into(),
            "--edition".into(),
            a.edition.to_string(),
        ];
        (argv, "built-in reference runtime".to_owned())
    } else {
        (a.cmd.clone(), a.cmd.join(" "))
    };
    let cmd = CommandSpec::from_argv(&argv).ok_or("empty runtime command")?;
    Ok((cmd, label))
}

/// Writes the report in `--format`: to the `--output` file (with the summary on stderr), else
/// to stdout.
fn write_report(
    a: &CheckArgs,
    report: &Report,
    output: Option<(std::fs::File, &PathBuf)>,
) -> Result<(), String> {
    let text = match a.format {
        Format::Human => report.human(a.verbose),
        Format::Json => format!("{:#}\n", report.json()),
        Format::Junit => report.junit(),
    };
    let Some((mut f, p)) = output else {
        dsh_conformance::out!("{text}");
        return Ok(());
    };
    f.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    eprintln!("{}", report.summary_line());
    if let Some(st) = &report.stopped {
        eprintln!("stopped: {}. {}", st.halt, st.cause);
    }
    Ok(())
}

/// `check --list`: the checks that `--filter` selects for `--edition`, as a table or JSON.
fn list_checks(a: &CheckArgs) -> i32 {
    use dsh_conformance::suite::run::matches_filter;
    let picked: Vec<&suite::CheckInfo> = suite::CHECKS
        .iter()
        .filter(|c| {
            a.filter
                .as_deref()
                .is_none_or(|f| matches_filter(c.id.as_str(), f))
        })
        .filter(|c| c.editions.contains(a.edition))
        .collect();
    if picked.is_empty() {
        eprintln!(
            "dsh-conformance check --list: no check of edition {} matches --filter {:?}",
            a.edition,
            a.filter.as_deref().unwrap_or("")
        );
        return 2;
    }
    match a.format {
        Format::Human => {
            for c in &picked {
                dsh_conformance::outln!(
                    "{:<36} {:<6} {:<8} {:<20} {}",
                    c.id,
                    c.severity,
                    c.section,
                    c.editions.names(),
                    c.rule
                );
            }
        }
        Format::Json => {
            let v: Vec<serde_json::Value> = picked
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id, "severity": c.severity.to_string(), "section": c.section,
                        "editions": c.editions.iter().map(Edition::name).collect::<Vec<_>>(),
                        "rule": c.rule, "requires": c.requires,
                    })
                })
                .collect();
            dsh_conformance::outln!("{:#}", serde_json::Value::Array(v));
        }
        Format::Junit => {
            eprintln!(
                "dsh-conformance check --list: --format junit has no list form (use human or json)"
            );
            return 2;
        }
    }
    0
}
