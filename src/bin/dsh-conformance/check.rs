//! `check`: the suite against a runtime, its arguments, and `check --list`.

use crate::args::{duration, duration_or_zero, Format, Processes};
use dsh_conformance::edition::Edition;
use dsh_conformance::suite::plan::{Budget, Plan};
use dsh_conformance::suite::share;
use std::time::Duration;

#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to FILE instead of stdout (the summary line still goes to stderr).
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// List the checks (id, severity, editions, rule) and exit.
    #[arg(long)]
    list: bool,
    /// With --list: the requirements matrix of --edition instead (docs/REQUIREMENTS.md: every
    /// normative statement of the contract, the checks that cover it or why none does, and the
    /// coverage per section).
    #[arg(long, requires = "list")]
    requirements: bool,
    /// Only checks whose id contains PATTERN (or matches it as a glob with `*`); repeatable: a
    /// check matching any of them runs.
    #[arg(long, value_name = "PATTERN")]
    filter: Vec<String>,
    /// Leave out checks whose id contains PATTERN (or matches it as a glob); repeatable, and
    /// stronger than --filter.
    #[arg(long, value_name = "PATTERN")]
    skip: Vec<String>,
    /// Protocol edition to check: current, 2026-08 or legacy.
    #[arg(long, default_value = "current")]
    edition: Edition,
    /// Hold the runtime to upstream's bytes where clients do not care: demand -32603 for unknown
    /// methods (not the transport-level -32601) and upstream's member order in every frame.
    #[arg(long)]
    strict_upstream: bool,
    /// Baseline of known failures: `<check-id>  # <reason>` per line; a listed check that passes fails the run.
    #[arg(long, value_name = "FILE")]
    known_failing: Option<std::path::PathBuf>,
    /// Write a first baseline to FILE after the run: every failing check, its reason stubbed
    /// with the failure for you to replace (then pass it as --known-failing).
    #[arg(long, value_name = "FILE")]
    write_known_failing: Option<std::path::PathBuf>,
    /// How long to wait for each expected frame (every deadline of the check traces scales with
    /// it): seconds, or a number with a unit (500ms, 10s, 2m).
    #[arg(long, value_name = "D", default_value = "10s", value_parser = duration, allow_negative_numbers = true)]
    timeout: Duration,
    /// How long the whole run may take (0: no bound). When spent, the run stops and the report
    /// holds the checks decided so far. Default: 300 s for judging plus the least time the
    /// runtime's boots take (measured in the preflight), so a slow-booting runtime is not cut
    /// short by its boots; a given budget is exact, and the run says at its start when the
    /// boots alone exceed it.
    #[arg(long, value_name = "D", value_parser = duration_or_zero, allow_negative_numbers = true)]
    budget: Option<Duration>,
    /// Checks run in parallel, each against its own runtime process (1–64; default: the number
    /// of CPUs, at most 8, as `fuzz`).
    #[arg(long, default_value_t = crate::args::default_jobs(), value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Runtime processes each job starts ahead of its next checks, so that a slow boot overlaps
    /// the checks before it (every case still runs on a fresh process of its own, started for
    /// it alone); 0 starts each case's process as the case begins. Default: from the time the
    /// runtime took to answer the preflight's initialize (none under 300 ms, at most 8).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=16))]
    prespawn: Option<u8>,
    /// Whether checks share warm runtime processes: `fresh` runs every case on a fresh process
    /// of its own; `shared` runs the cases whose rule does not depend on the process (sessions
    /// and ids of their own, the standard initialize, no lifecycle step) one after another on a
    /// process per job, and runs any that does not pass cleanly there again on a fresh process,
    /// so verdicts do not change; `auto` is `shared` when the runtime took 500 ms or more to
    /// answer the preflight's initialize, else `fresh`. The JSON report's `ran_in` says where
    /// each case ran.
    #[arg(long, value_enum, default_value_t = Processes::Auto)]
    processes: Processes,
    /// Start the scripted model stub on 127.0.0.1 and give the runtime its DEEPSEEK_BASE_URL/DEEPSEEK_API_KEY (Anthropic Messages) and OPENAI_BASE_URL/OPENAI_API_KEY (chat-completions).
    #[arg(long)]
    model_stub: bool,
    /// SHOULD failures fail the run too (exit 1, and JUnit `<failure>`s); without it they are
    /// reported, and JUnit lists them as `<skipped type="SHOULD">`.
    #[arg(long)]
    should_fail: bool,
    /// Progress on stderr, a line per finished check: `auto` on a terminal (rewritten in place),
    /// or when the report goes to a file (--output); not when the report follows on stdout, so a
    /// CI log shows each check once.
    #[arg(long, value_enum, default_value_t = When::Auto)]
    progress: When,
    /// Colour the verdicts of the human report: `auto` when stdout is a terminal and NO_COLOR is
    /// unset or empty.
    #[arg(long, value_enum, default_value_t = When::Auto)]
    color: When,
    /// Print failure details for every failed check (human format).
    #[arg(long, short)]
    verbose: bool,
    #[command(flatten)]
    contract: crate::report::ContractArg,
    /// The runtime command line (default: the built-in reference runtime).
    #[arg(last = true)]
    cmd: Vec<std::ffi::OsString>,
}

impl CheckArgs {
    fn selection(&self) -> dsh_conformance::suite::select::Selection {
        dsh_conformance::suite::select::Selection {
            filters: self.filter.clone(),
            skips: self.skip.clone(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum When {
    Auto,
    Always,
    Never,
}

pub(crate) fn check(a: CheckArgs) -> i32 {
    if a.list && a.requirements {
        return list_requirements(&a);
    }
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

/// The run: what it needs found first (the baseline, the outputs, the runtime, the stub), then
/// the suite, then the report written. `Err`: a usage problem, exit 2.
fn run_check(a: &CheckArgs) -> Result<i32, String> {
    use dsh_conformance::suite::{self, Baseline};
    let baseline = baseline(a)?;
    // Found before the run, not after it: the report must have somewhere to go.
    let create = |p: &std::path::Path, flag: &str| {
        std::fs::File::create(p).map_err(|e| format!("{flag} {}: {e}", p.display()))
    };
    let output = a
        .output
        .as_deref()
        .map(|p| create(p, "--output"))
        .transpose()?;
    let write_baseline = (a.write_known_failing.as_deref())
        .map(|p| create(p, "--write-known-failing").map(|f| (f, p)))
        .transpose()?;
    let (cmd, label) = runtime_command(a)?;
    let stub = match a.model_stub {
        true => Some(std::sync::Arc::new(
            dsh_conformance::model_stub::ModelStub::start()
                .map_err(|e| format!("cannot start the model stub: {e}"))?,
        )),
        false => None,
    };
    let opts = options(a, baseline, stub.clone());
    if let Err(e) = opts.cancel.on_signals(
        &[libc::SIGINT, libc::SIGTERM],
        "stopping the run; the partial report follows (send it again to quit at once)",
    ) {
        eprintln!("dsh-conformance check: cannot install signal handlers: {e}");
    }
    eprintln!(
        "dsh-conformance check: {label} (edition {}); run budget {} (--budget), {} s per expected frame (--timeout), {} job(s)",
        a.edition,
        match opts.budget {
            Budget::None => "none".to_owned(),
            Budget::Fixed(b) => format!("{} s", b.as_secs_f64()),
            Budget::PlusBoots(b) => format!("{} s plus the boots", b.as_secs_f64()),
        },
        a.timeout.as_secs_f64(),
        a.jobs
    );
    let report = suite::run::run(&cmd, &label, &opts).map_err(|e| e.to_string())?;
    if let Some((mut f, p)) = write_baseline {
        write(&mut f, p, &Baseline::stub(&report))?;
        eprintln!(
            "dsh-conformance check: wrote the failing checks to {} (give each a reason)",
            p.display()
        );
    }
    write_report(a, &report, output)?;
    if let Some(s) = &stub {
        if report.exit_code() != 0 && a.verbose {
            eprintln!("model stub log:\n{}", s.log_text());
        }
    }
    Ok(report.exit_code())
}

/// `--known-failing`, read and parsed; a warning for entries still stubbed.
fn baseline(a: &CheckArgs) -> Result<dsh_conformance::suite::Baseline, String> {
    use dsh_conformance::suite::Baseline;
    let Some(p) = &a.known_failing else {
        return Ok(Baseline::default());
    };
    let b = std::fs::read_to_string(p)
        .map_err(|e| format!("cannot read {}: {e}", p.display()))
        .and_then(|t| {
            let subject = dsh_conformance::check::Subject::Runtime;
            Baseline::parse(&t, &p.display().to_string(), subject)
        })
        .map_err(|e| format!("--known-failing: {e}"))?;
    let stubbed = b.unjustified();
    if !stubbed.is_empty() {
        eprintln!(
            "dsh-conformance check: warning: --known-failing: {} entr{} still without a reason: {}",
            stubbed.len(),
            if stubbed.len() == 1 { "y" } else { "ies" },
            stubbed.join(", ")
        );
    }
    Ok(b)
}

/// The runtime command and its label: what follows `--`, or the kit's own reference runtime.
fn runtime_command(
    a: &CheckArgs,
) -> Result<(dsh_conformance::runner::CommandSpec, String), String> {
    // `--` with nothing after it is a command line whose runtime went missing (a CI job's empty
    // `$RUNTIME`), not a request for the built-in runtime: checking ours would pass that job.
    // clap gives the same empty `cmd` with and without the `--`, so the raw arguments tell.
    if a.cmd.is_empty() && std::env::args_os().any(|w| w == "--") {
        return Err("`--` is followed by no runtime command (an empty variable?): name the runtime after `--`, or leave `--` out to check the built-in reference runtime".into());
    }
    let (argv, label) = if a.cmd.is_empty() {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find its own executable: {e}"))?;
        let argv = [
            exe.into_os_string(),
            "runtime".into(),
            "--edition".into(),
            a.edition.to_string().into(),
        ];
        (argv.to_vec(), "built-in reference runtime".to_owned())
    } else {
        let words: Vec<String> = (a.cmd.iter())
            .map(|w| dsh_conformance::runner::lossless_display(w))
            .collect();
        (a.cmd.clone(), words.join(" "))
    };
    let cmd =
        dsh_conformance::runner::CommandSpec::from_argv(&argv).ok_or("empty runtime command")?;
    Ok((cmd, label))
}

/// The suite's options from the flags.
fn options(
    a: &CheckArgs,
    baseline: dsh_conformance::suite::Baseline,
    stub: Option<std::sync::Arc<dsh_conformance::model_stub::ModelStub>>,
) -> dsh_conformance::suite::run::Options {
    use dsh_conformance::suite::run::{Options, StubLog, DEFAULT_BUDGET};
    use std::io::IsTerminal as _;
    Options {
        edition: a.edition,
        select: a.selection(),
        strict_upstream: a.strict_upstream,
        frame_timeout: a.timeout,
        jobs: usize::from(a.jobs),
        env: stub.as_ref().map(|s| s.env()).unwrap_or_default(),
        baseline,
        progress: match a.progress {
            When::Always => true,
            When::Never => false,
            When::Auto => std::io::stderr().is_terminal() || a.output.is_some(),
        },
        model_stub: stub.map(StubLog::of),
        budget: match a.budget {
            None => Budget::PlusBoots(DEFAULT_BUDGET),
            Some(d) if d.is_zero() => Budget::None,
            Some(d) => Budget::Fixed(d),
        },
        on_plan: Some(print_plan),
        should_fail: a.should_fail,
        prespawn: a.prespawn.map(usize::from),
        processes: match a.processes {
            Processes::Auto => share::Processes::Auto,
            Processes::Fresh => share::Processes::Fresh,
            Processes::Shared => share::Processes::Shared,
        },
        ..Options::default()
    }
}

/// The plan, on stderr before any check runs: when the boots take a while, how long at least;
/// when they alone exceed the budget, that first.
fn print_plan(p: &Plan) {
    if let Some(why) = p.wont_fit() {
        eprintln!("dsh-conformance check: warning: {why}");
    } else if p.boots >= Duration::from_secs(1) {
        eprintln!(
            "dsh-conformance check: {} runtime processes, at least {:.0} s of boots here; run budget {}",
            p.processes,
            p.boots.as_secs_f64(),
            p.budget.map_or("none".to_owned(), |b| format!("{:.0} s", b.as_secs_f64()))
        );
    }
}

/// The report in its format, to `--output` (the summary line then on stderr) or stdout.
fn write_report(
    a: &CheckArgs,
    report: &dsh_conformance::suite::Report,
    output: Option<std::fs::File>,
) -> Result<(), String> {
    use std::io::IsTerminal as _;
    let text = match a.format {
        Format::Human => {
            let color = match a.color {
                When::Always => true,
                When::Never => false,
                When::Auto => {
                    a.output.is_none()
                        && std::io::stdout().is_terminal()
                        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                }
            };
            report.human_styled(a.verbose, color)
        }
        Format::Json => format!("{:#}\n", report.json()),
        Format::Junit => report.junit(),
        Format::Html => dsh_conformance::suite::html::page(&[report.json()], &a.contract.options()),
    };
    match (output, &a.output) {
        (Some(mut f), Some(p)) => {
            write(&mut f, p, &text)?;
            eprintln!("{}", report.summary_line());
            if let Some(st) = &report.stopped {
                eprintln!("stopped: {}. {}", st.halt, st.cause);
            }
        }
        _ => dsh_conformance::out!("{text}"),
    }
    Ok(())
}

fn write(f: &mut std::fs::File, p: &std::path::Path, text: &str) -> Result<(), String> {
    use std::io::Write as _;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", p.display()))
}

/// `check --list --requirements`: the matrix of `--edition`, as a table or JSON.
fn list_requirements(a: &CheckArgs) -> i32 {
    use dsh_conformance::requirements::render;
    crate::list::emit(
        "check --list --requirements",
        a.format,
        a.output.as_deref(),
        || render::text(a.edition),
        || render::json(a.edition),
    )
}

/// `check --list`: the checks that `--filter` selects for `--edition`, as a table or JSON.
fn list_checks(a: &CheckArgs) -> i32 {
    use dsh_conformance::suite;
    let select = a.selection();
    let picked: Vec<&suite::CheckInfo> =
        dsh_conformance::check::of(dsh_conformance::check::Subject::Runtime)
            .filter(|c| select.selects(c.id))
            .filter(|c| c.editions.contains(a.edition))
            .collect();
    if picked.is_empty() {
        eprintln!(
            "dsh-conformance check --list: no check of edition {} is selected by {select}",
            a.edition
        );
        return 2;
    }
    let human = || {
        let row = |c: &&suite::CheckInfo| {
            let (id, sev, sec, ed) = (c.id, c.severity, c.section, c.editions.names());
            format!("{id:<36} {sev:<6} {sec:<8} {ed:<20} {}\n", c.rule)
        };
        picked.iter().map(row).collect()
    };
    let json = || {
        (picked.iter())
            .map(|c| {
                serde_json::json!({
                    "id": c.id, "severity": c.severity.to_string(), "section": c.section,
                    "editions": c.editions.iter().map(Edition::name).collect::<Vec<_>>(),
                    "rule": c.rule, "requires": c.requires,
                })
            })
            .collect()
    };
    crate::list::emit("check --list", a.format, a.output.as_deref(), human, json)
}
