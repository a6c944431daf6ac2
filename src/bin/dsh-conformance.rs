//! The kit's command line: thin argument parsing over the library. Exit codes: 0 pass, 1 findings,
//! 2 usage error or a runtime that cannot be started.

use clap::{Parser, Subcommand};
use dsh_conformance::edition::Edition;

#[derive(Parser)]
#[command(
    name = "dsh-conformance",
    version,
    about = "Wire-conformance test kit, reference runtime and fuzzer for the DeepSeek Harness SDK runtime protocol",
    long_about = "Wire-conformance test kit, reference runtime and fuzzer for the DeepSeek Harness SDK runtime \
protocol (newline-delimited JSON-RPC 2.0 over a child process's stdio).\n\n\
Point it at a runtime with `-- <cmd> <args>`; with no runtime named it uses its own built-in reference runtime.\n\
Exit codes: 0 all MUST checks pass, 1 findings, 2 usage error or the runtime cannot be started."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the conformance suite against a runtime (default: the built-in reference runtime).
    Check(CheckArgs),
    Replay(dsh_conformance::runner::cli::ReplayArgs),
    Record(dsh_conformance::runner::cli::RecordArgs),
    Import(dsh_conformance::runner::cli::ImportArgs),
    /// Run a runtime behind a transparent stdio proxy and write the live session as a golden trace
    /// (put it where a client expects its runtime binary).
    Tap {
        /// The golden trace to write when the runtime ends.
        #[arg(long, value_name = "FILE")]
        out: std::path::PathBuf,
        /// Also write the raw transcript (the layout `import` reads).
        #[arg(long, value_name = "FILE")]
        raw: Option<std::path::PathBuf>,
        /// The trace's case name.
        #[arg(long, default_value = "tapped-session")]
        case: String,
        /// The runtime command line (the client's arguments follow it).
        #[arg(last = true, required = true)]
        cmd: Vec<String>,
    },
    /// Serve the scripted model stub in the foreground: prints the environment to export, logs each
    /// request, ends on Ctrl-C.
    ModelStub {
        /// Port on 127.0.0.1 (0: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Stop after this many seconds (default: until SIGINT/SIGTERM).
        #[arg(long)]
        seconds: Option<f64>,
    },
    /// Print a check's rule, the docs/CONTRACT.md sections it cites (quoted) and its traces.
    Explain {
        /// The check id (see `check --list`).
        id: String,
    },
    /// Serve the built-in reference runtime on stdio (same as `dsh-reference-runtime`).
    #[command(disable_help_flag = true)]
    Runtime {
        /// Arguments for the runtime: [--profile sdk|sdk-minimal] [--edition current|2026-08|legacy] [--help]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Measure a runtime through its stdio: cold start, cheap frames/s, echo prompts/s, RSS per sessions.
    Bench(BenchArgs),
    /// Black-box fuzz a runtime over stdio: seeded frame sequences, invariants, optional differential mode.
    Fuzz(FuzzArgs),
    /// Run a deliberately broken runtime: a proxy in front of CMD that breaks one rule (for self-tests).
    #[command(hide = true)]
    Mutant {
        /// The mutant's name, or several comma-separated (`a,b,c`: stacked, `a` closest to the
        /// client); `list` prints them all.
        name: String,
        /// The runtime command to wrap.
        #[arg(last = true)]
        cmd: Vec<String>,
    },
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to FILE instead of stdout (the summary line still goes to stderr).
    #[arg(long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// List the checks (id, severity, editions, rule) and exit.
    #[arg(long)]
    list: bool,
    /// Only checks whose id contains PATTERN (or matches it as a glob with `*`).
    #[arg(long, value_name = "PATTERN")]
    filter: Option<String>,
    /// Protocol edition to check: current, 2026-08 or legacy.
    #[arg(long, default_value = "current")]
    edition: Edition,
    /// Demand -32603 for unknown methods (do not accept the transport-level -32601).
    #[arg(long)]
    strict_upstream: bool,
    /// Baseline of known failures: `<check-id>  # <reason>` per line; a listed check that passes fails the run.
    #[arg(long, value_name = "FILE")]
    known_failing: Option<std::path::PathBuf>,
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

fn check(a: CheckArgs) -> i32 {
    use dsh_conformance::runner::CommandSpec;
    use dsh_conformance::suite::{self, Baseline};
    use std::io::Write as _;
    if a.list {
        return list_checks(&a);
    }
    let baseline = match &a.known_failing {
        None => Baseline::default(),
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
            .and_then(|t| Baseline::parse(&t, &p.display().to_string()))
        {
            Ok(b) => b,
            Err(e) => {
                eprintln!("dsh-conformance check: --known-failing: {e}");
                return 2;
            }
        },
    };
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        eprintln!(
            "dsh-conformance check: --timeout must be a positive number of seconds, not {}",
            a.timeout
        );
        return 2;
    }
    if !(a.budget.is_finite() && a.budget >= 0.0) {
        eprintln!(
            "dsh-conformance check: --budget must be a number of seconds ≥ 0 (0: no bound), not {}",
            a.budget
        );
        return 2;
    }
    // Found before the run, not after it: the report must have somewhere to go.
    let mut output = match &a.output {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("dsh-conformance check: --output {}: {e}", p.display());
                return 2;
            }
        },
        None => None,
    };
    let (argv, label) = if a.cmd.is_empty() {
        match std::env::current_exe() {
            Ok(exe) => (
                vec![
                    exe.display().to_string(),
                    "runtime".into(),
                    "--edition".into(),
                    a.edition.to_string(),
                ],
                "built-in reference runtime".to_owned(),
            ),
            Err(e) => {
                eprintln!("dsh-conformance check: cannot find its own executable: {e}");
                return 2;
            }
        }
    } else {
        (a.cmd.clone(), a.cmd.join(" "))
    };
    let Some(cmd) = CommandSpec::from_argv(&argv) else {
        eprintln!("dsh-conformance check: empty runtime command");
        return 2;
    };
    let stub = if a.model_stub {
        match dsh_conformance::model_stub::ModelStub::start() {
            Ok(s) => Some(std::sync::Arc::new(s)),
            Err(e) => {
                eprintln!("dsh-conformance check: cannot start the model stub: {e}");
                return 2;
            }
        }
    } else {
        None
    };
    let budget = (a.budget > 0.0).then(|| std::time::Duration::from_secs_f64(a.budget));
    let opts = suite::run::Options {
        edition: a.edition,
        filter: a.filter.clone(),
        strict_upstream: a.strict_upstream,
        frame_timeout: std::time::Duration::from_secs_f64(a.timeout),
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
    let report = match suite::run::run(&cmd, &label, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("dsh-conformance check: {e}");
            return 2;
        }
    };
    let text = match a.format {
        Format::Human => report.human(a.verbose),
        Format::Json => format!("{:#}\n", report.json()),
        Format::Junit => report.junit(),
    };
    match (&mut output, &a.output) {
        (Some(f), Some(p)) => {
            if let Err(e) = f.write_all(text.as_bytes()) {
                eprintln!("dsh-conformance check: cannot write {}: {e}", p.display());
                return 2;
            }
            eprintln!("{}", report.summary_line());
            if let Some(st) = &report.stopped {
                eprintln!("stopped: {}. {}", st.halt, st.cause);
            }
        }
        _ => print!("{text}"),
    }
    if let Some(s) = &stub {
        if report.exit_code() != 0 && a.verbose {
            eprintln!("model stub log:\n{}", s.log_text());
        }
    }
    report.exit_code()
}

/// `check --list`: the checks that `--filter` selects for `--edition`, as a table or JSON.
fn list_checks(a: &CheckArgs) -> i32 {
    use dsh_conformance::suite::{self, run::matches_filter};
    let picked: Vec<&suite::CheckInfo> = suite::CHECKS
        .iter()
        .filter(|c| a.filter.as_deref().is_none_or(|f| matches_filter(c.id, f)))
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
                println!(
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
            println!("{:#}", serde_json::Value::Array(v));
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

fn explain(id: &str) -> i32 {
    match dsh_conformance::suite::explain::explain(id) {
        Ok(explanation) => {
            print!("{explanation}");
            0
        }
        Err(e) => {
            eprintln!("dsh-conformance explain: {e}");
            2
        }
    }
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Cheap `probe/x` requests piped after initialize.
    #[arg(long, default_value_t = 100_000)]
    frames: usize,
    /// Echo prompts (`reply: ok`), with their full event streams.
    #[arg(long, default_value_t = 20_000)]
    prompts: usize,
    /// Sessions the prompts are spread over.
    #[arg(long, default_value_t = 100)]
    prompt_sessions: usize,
    /// Session counts to measure RSS at (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "10000")]
    sessions: Vec<usize>,
    /// Processes started for the cold-start median.
    #[arg(long, default_value_t = 20)]
    cold_runs: usize,
    /// Start the scripted model stub and pass its DEEPSEEK_* environment (for runtimes that call a model).
    #[arg(long)]
    model_stub: bool,
    /// Deadline of each workload, in seconds (a runtime silent for 30 s while answers are due is
    /// given up on sooner).
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// The runtime command (default: the built-in reference runtime).
    #[arg(last = true)]
    cmd: Vec<String>,
}

/// One `bench` workload.
enum Workload {
    ColdStart,
    CheapFrames,
    EchoPrompts,
    SessionsRss(usize),
}

fn bench(a: BenchArgs) -> i32 {
    use dsh_conformance::loadgen;
    use dsh_conformance::runner::CommandSpec;
    use std::time::Duration;
    let argv = if a.cmd.is_empty() {
        match std::env::current_exe() {
            Ok(exe) => vec![
                exe.display().to_string(),
                "runtime".into(),
                "--profile".into(),
                "sdk".into(),
            ],
            Err(e) => {
                eprintln!("dsh-conformance bench: cannot find its own executable: {e}");
                return 2;
            }
        }
    } else {
        a.cmd.clone()
    };
    // A relative program or script path means the caller's directory, not the runtime's fresh one.
    let Some(cmd) = CommandSpec::from_argv(&argv) else {
        eprintln!("dsh-conformance bench: empty runtime command");
        return 2;
    };
    if a.timeout == 0 {
        eprintln!("dsh-conformance bench: --timeout must be a positive number of seconds");
        return 2;
    }
    let stub = if a.model_stub {
        match dsh_conformance::model_stub::ModelStub::start() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("dsh-conformance bench: cannot start the model stub: {e}");
                return 2;
            }
        }
    } else {
        None
    };
    let env = stub.as_ref().map(|s| s.env()).unwrap_or_default();
    let t = loadgen::Target {
        cmd: cmd.clone(),
        env,
        timeout: Duration::from_secs(a.timeout),
    };
    println!("runtime: {cmd}");
    let mut list = vec![
        Workload::ColdStart,
        Workload::CheapFrames,
        Workload::EchoPrompts,
    ];
    list.extend(a.sessions.iter().map(|n| Workload::SessionsRss(*n)));
    let total = list.len();
    let (mut failed, mut cannot_start) = (false, false);
    let mut skip: Option<String> = None;
    for (i, w) in list.iter().enumerate() {
        let (name, what) = match w {
            Workload::ColdStart => (
                "cold start → initialize".to_owned(),
                format!("{} processes", a.cold_runs.max(1)),
            ),
            Workload::CheapFrames => (
                "cheap frames".to_owned(),
                format!("{} probe/x requests", a.frames),
            ),
            Workload::EchoPrompts => (
                "echo prompts".to_owned(),
                format!("{} prompts over {} sessions", a.prompts, a.prompt_sessions),
            ),
            Workload::SessionsRss(n) => (
                format!("RSS with {n} sessions"),
                format!("{n} sessions, one prompt each"),
            ),
        };
        if let Some(why) = &skip {
            println!("{name:<28} skipped: {why}");
            continue;
        }
        eprintln!(
            "bench: {}/{total} {name}: {what} (deadline {} s)",
            i + 1,
            a.timeout
        );
        let r =
            match w {
                Workload::ColdStart => loadgen::cold_start(&t, a.cold_runs).map(|d| {
                    format!(
                        "{:.2} ms (median of {})",
                        d.as_secs_f64() * 1e3,
                        a.cold_runs.max(1)
                    )
                }),
                Workload::CheapFrames => loadgen::cheap_frames(&t, a.frames)
                    .map(|r| format!("{r:.0} frames/s ({} probe/x requests)", a.frames)),
                Workload::EchoPrompts => loadgen::echo_prompts(&t, a.prompts, a.prompt_sessions)
                    .map(|(r, lines)| {
                        format!(
                            "{r:.0} prompts/s ({} prompts, {lines} frames read)",
                            a.prompts
                        )
                    }),
                Workload::SessionsRss(n) => loadgen::sessions_rss(&t, *n)
                    .map(|kib| format!("{:.1} MB", kib as f64 / 1024.0)),
            };
        match r {
            Ok(v) => println!("{name:<28} {v}"),
            Err(e) => {
                failed = true;
                println!("{name:<28} FAILED: {e}");
                if e.cannot_start() {
                    cannot_start = true;
                    skip = Some("the runtime cannot start".into());
                } else if e.hung() {
                    skip = Some(format!("the runtime answered nothing in `{name}`"));
                }
            }
        }
    }
    if cannot_start {
        2
    } else {
        i32::from(failed)
    }
}

#[derive(clap::Args)]
struct FuzzArgs {
    /// Stop after this many seconds (checked between sequences; default 60 when --cases is not given).
    #[arg(long)]
    seconds: Option<f64>,
    /// Stop after this many sequences.
    #[arg(long)]
    cases: Option<u64>,
    /// Seed of the sequence generator (default: from the clock; printed in the summary).
    #[arg(long)]
    seed: Option<u64>,
    /// Protocol edition the runtime speaks.
    #[arg(long, value_parser = ["current", "2026-08", "legacy"], default_value = "current")]
    edition: String,
    /// Start the scripted model stub on 127.0.0.1 and give the runtime its DEEPSEEK_BASE_URL/DEEPSEEK_API_KEY.
    #[arg(long)]
    model_stub: bool,
    /// Also run every sequence on the built-in reference runtime and report each classified difference.
    #[arg(long)]
    against_reference: bool,
    /// Known, justified differences: `<class-pattern> [| <detail>]  # <reason>` per line.
    #[arg(long, value_name = "FILE")]
    allowlist: Option<std::path::PathBuf>,
    /// Directory for the reproducing traces of findings.
    #[arg(long, value_name = "DIR", default_value = "fuzz-findings")]
    out: std::path::PathBuf,
    /// Seconds to wait for the barrier's answer (a runtime that takes longer hangs).
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Runs spent shrinking each new finding at most.
    #[arg(long, default_value_t = 60)]
    shrink_trials: usize,
    /// Do not replay written traces to check that they reproduce.
    #[arg(long)]
    no_verify: bool,
    /// Reject -32601 for unknown methods (upstream answers -32603); by default it is accepted with
    /// upstream's message, as `check` does.
    #[arg(long)]
    strict_upstream: bool,
    /// The runtime command line (default: the built-in reference runtime).
    #[arg(last = true)]
    cmd: Vec<String>,
}

fn fuzz(a: FuzzArgs) -> i32 {
    use dsh_conformance::blackbox::{self, Allowlist, Deadlines, Target};
    use dsh_conformance::runner::CommandSpec;
    use std::time::Duration;
    let fail = |m: String| {
        eprintln!("dsh-conformance fuzz: {m}");
        2
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return fail(format!("cannot find its own executable: {e}")),
    };
    let reference = CommandSpec::new(&exe)
        .arg("runtime")
        .arg("--edition")
        .arg(a.edition.clone());
    let subject = if a.cmd.is_empty() {
        reference.clone()
    } else {
        match CommandSpec::from_argv(&a.cmd) {
            Some(c) => c,
            None => return fail("empty runtime command".into()),
        }
    };
    let allowlist = match &a.allowlist {
        None => Allowlist::default(),
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| format!("{}: {e}", p.display()))
            .and_then(|t| Allowlist::parse(&t, &p.display().to_string()))
        {
            Ok(l) => l,
            Err(e) => return fail(format!("--allowlist: {e}")),
        },
    };
    if !(a.timeout.is_finite() && a.timeout > 0.0)
        || a.seconds.is_some_and(|s| s.is_nan() || s < 0.0)
    {
        return fail("--timeout and --seconds must be positive numbers of seconds".into());
    }
    let stub = if a.model_stub {
        match dsh_conformance::model_stub::ModelStub::start() {
            Ok(s) => Some(s),
            Err(e) => return fail(format!("cannot start the model stub: {e}")),
        }
    } else {
        None
    };
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let edition = match a.edition.parse::<Edition>() {
        Ok(e) => e,
        Err(e) => return fail(e.to_string()),
    };
    let t = Duration::from_secs_f64(a.timeout);
    let opts = blackbox::Options {
        seed,
        cases: a.cases,
        seconds: a.seconds,
        edition,
        subject: Target {
            cmd: subject,
            env: stub.as_ref().map(|s| s.env()).unwrap_or_default(),
        },
        reference: Target {
            cmd: reference,
            env: Vec::new(),
        },
        differential: a.against_reference,
        allowlist,
        out: Some(a.out.clone()),
        deadlines: Deadlines {
            barrier: t,
            settle: t,
            exit: t.max(Duration::from_secs(10)),
        },
        shrink_trials: a.shrink_trials,
        shrink_time: Duration::from_secs(120),
        verify: !a.no_verify,
        progress: true,
        strict_upstream: a.strict_upstream,
    };
    let summary = blackbox::run(&opts);
    print!("{}", summary.human());
    summary.exit_code()
}

fn main() {
    let cli = Cli::parse();
    // `check` stops gracefully (partial report); these end at once, leaving nothing behind.
    let abrupt = match &cli.command {
        Cmd::Replay(_) => Some("replay"),
        Cmd::Record(_) => Some("record"),
        Cmd::Bench(_) => Some("bench"),
        Cmd::Fuzz(_) => Some("fuzz"),
        _ => None,
    };
    if let Some(what) = abrupt {
        if let Err(e) = dsh_conformance::runner::cleanup::exit_on_signals(what) {
            eprintln!("dsh-conformance {what}: cannot install signal handlers: {e}");
        }
    }
    let code = match cli.command {
        Cmd::Runtime { args } => dsh_conformance::runtime::serve_stdio(&args),
        Cmd::Check(a) => check(a),
        Cmd::Replay(a) => a.run(),
        Cmd::Record(a) => a.run(),
        Cmd::Import(a) => a.run(),
        Cmd::Explain { id } => explain(&id),
        Cmd::ModelStub { port, seconds } => {
            dsh_conformance::model_stub::serve::serve(port, seconds)
        }
        Cmd::Tap {
            out,
            raw,
            case,
            cmd,
        } => {
            let opts = dsh_conformance::runner::tap::TapOptions { out, raw, case };
            match dsh_conformance::runner::tap::tap(&cmd, &opts) {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("dsh-conformance tap: {e}");
                    2
                }
            }
        }
        Cmd::Bench(a) => bench(a),
        Cmd::Fuzz(a) => fuzz(a),
        Cmd::Mutant { name, cmd } => {
            if name == "list" {
                for m in dsh_conformance::mutants::ALL {
                    println!("{:<24} {:<36} {}", m.name, m.catches, m.breaks);
                }
                0
            } else {
                dsh_conformance::mutants::run(&name, &cmd)
            }
        }
    };
    std::process::exit(code);
}
