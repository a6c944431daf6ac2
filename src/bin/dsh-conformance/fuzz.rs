//! `fuzz`: the black-box and differential fuzzer.

use crate::args::{duration, Processes};
use dsh_conformance::edition::Edition;
use std::time::Duration;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct FuzzArgs {
    #[command(subcommand)]
    merge: Option<FuzzCmd>,
    /// Stop after this long (seconds, or a number with a unit; checked between sequences;
    /// default 60 s when --cases is not given).
    #[arg(long, value_name = "D", value_parser = duration, allow_negative_numbers = true)]
    seconds: Option<Duration>,
    /// Stop after this many sequences.
    #[arg(long)]
    cases: Option<u64>,
    /// Seed of the sequence generator (default: from the clock; printed in the summary).
    #[arg(long)]
    seed: Option<u64>,
    /// Protocol edition the runtime speaks.
    #[arg(long, value_parser = ["current", "2026-08", "legacy"], default_value = "current")]
    edition: String,
    /// Start the scripted model stub on 127.0.0.1 and give the runtime its DEEPSEEK_BASE_URL/DEEPSEEK_API_KEY (Anthropic Messages) and OPENAI_BASE_URL/OPENAI_API_KEY (chat-completions).
    #[arg(long)]
    model_stub: bool,
    /// Also run every sequence on the built-in reference runtime and report each classified difference.
    #[arg(long)]
    against_reference: bool,
    /// Known, justified differences: `<class-pattern> [| <detail>]  # <reason>` per line.
    #[arg(long, value_name = "FILE")]
    allowlist: Option<std::path::PathBuf>,
    /// Directory for the reproducing traces of findings (`--out` is an older spelling).
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "out",
        value_name = "DIR",
        default_value = "fuzz-findings"
    )]
    out: std::path::PathBuf,
    /// How long to wait for the barrier's answer (a runtime that takes longer hangs).
    #[arg(long, value_name = "D", default_value = "10s", value_parser = duration, allow_negative_numbers = true)]
    timeout: Duration,
    /// Runs spent shrinking each new finding at most.
    #[arg(long, default_value_t = 60)]
    shrink_trials: usize,
    /// Do not replay written traces to check that they reproduce.
    #[arg(long)]
    no_verify: bool,
    /// Hold the runtime to upstream's bytes, as `check` does: reject -32601 for unknown methods
    /// (by default accepted with upstream's message) and judge member order.
    #[arg(long)]
    strict_upstream: bool,
    /// Sequences run at once, each lane on its own runtime processes (1–64; default: the
    /// number of CPUs, at most 8, as `check`). Results do not depend on timing across lanes: lane w of J runs cases w,
    /// w+J, …, so a seed and a lane count give the same sequences on the same processes. Most of
    /// a sequence is waiting, so more lanes than CPUs pay off against a fast runtime (--jobs 16).
    #[arg(long, default_value_t = crate::args::default_jobs(), value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Whether sequences share runtime processes: `fresh` starts one per sequence; `shared` runs
    /// the sequences the contract isolates (standard initialize, no lifecycle operation, sessions
    /// of their own) one after another on one process per lane; `auto` is `shared` with
    /// --against-reference, and otherwise `fresh` until a fresh process takes 1 s or more to
    /// answer its first initialize (a slow boot), `shared` from then on.
    #[arg(long, value_enum, default_value_t = Processes::Auto)]
    processes: Processes,
    /// Run shard K of N of the seed's cases: cases K-1, K-1+N, K-1+2N, … (1 <= K <= N), so that
    /// N jobs with the same --seed together run exactly what one unsharded run would; join their
    /// --out directories with `fuzz merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<dsh_conformance::blackbox::Shard>,
    /// The profile the runtime was launched with (`sdk` or `sdk-minimal`): the reference runtime
    /// runs under it too, and the sequences call every tool it offers, with valid and invalid
    /// inputs. Without it: the reference's default profile (`sdk`) and no generated tool calls.
    #[arg(long, value_name = "P", value_parser = ["sdk", "sdk-minimal"])]
    profile: Option<String>,
    /// The runtime command line (default: the built-in reference runtime).
    #[arg(last = true)]
    cmd: Vec<std::ffi::OsString>,
}

/// `fuzz merge`.
#[derive(clap::Subcommand)]
pub(crate) enum FuzzCmd {
    /// Join the finding classes and reproducing traces of several --out directories into one
    /// (one entry per class, counts added, the first directory's trace kept).
    Merge {
        /// The merged directory (`--out` is an older spelling).
        #[arg(
            short = 'o',
            long = "output",
            visible_alias = "out",
            value_name = "DIR",
            default_value = "fuzz-findings"
        )]
        out: std::path::PathBuf,
        /// The --out directories of the runs.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<std::path::PathBuf>,
    },
}

fn merge(out: &std::path::Path, dirs: &[std::path::PathBuf]) -> i32 {
    let dirs: Vec<&std::path::Path> = dirs.iter().map(|d| d.as_path()).collect();
    match dsh_conformance::blackbox::merge::merge(&dirs, out) {
        Ok(m) => {
            dsh_conformance::out!("{}", m.human());
            i32::from(!m.classes.is_empty())
        }
        Err(e) => {
            eprintln!("dsh-conformance fuzz merge: {e}");
            2
        }
    }
}

pub(crate) fn fuzz(a: FuzzArgs) -> i32 {
    use dsh_conformance::blackbox;
    if let Some(FuzzCmd::Merge { out, dirs }) = &a.merge {
        return merge(out, dirs);
    }
    let opts = match options(&a) {
        Ok(o) => o,
        Err(m) => {
            eprintln!("dsh-conformance fuzz: {m}");
            return 2;
        }
    };
    // Ctrl-C stops the run, which still writes its summary, its traces and findings.json.
    if let Err(e) = opts.cancel.on_signals(
        &[libc::SIGINT, libc::SIGTERM],
        "stopping the fuzz run; the summary and findings.json follow (send it again to quit at once)",
    ) {
        eprintln!("dsh-conformance fuzz: cannot install signal handlers: {e}");
    }
    let summary = blackbox::run(&opts);
    if summary.interrupted.is_some() {
        // Every run ends its runtime on its own path; this also gets any a signal caught
        // between a start and its registration, and their directories.
        dsh_conformance::runner::cleanup::undo_all();
    }
    dsh_conformance::out!("{}", summary.human());
    let mut code = summary.exit_code();
    for e in summary.write_errors() {
        eprintln!("dsh-conformance fuzz: reproducer lost: {e}");
    }
    if let Err(e) = blackbox::merge::write(&summary, &a.out) {
        eprintln!("dsh-conformance fuzz: {e}");
        code = 2;
    }
    code
}

/// The fuzzer's settings from the flags (the model stub started when asked for); `Err` is a
/// usage problem.
fn options(a: &FuzzArgs) -> Result<dsh_conformance::blackbox::Options, String> {
    use dsh_conformance::blackbox::{self, Deadlines, Target};
    // No reproducer may be lost at the end of a long run: the directory must take files now.
    blackbox::check_out_dir(&a.out).map_err(|e| format!("--out: {e}"))?;
    let (subject, reference, tools) = commands(a)?;
    let stub = match a.model_stub {
        true => Some(std::sync::Arc::new(
            dsh_conformance::model_stub::ModelStub::start()
                .map_err(|e| format!("cannot start the model stub: {e}"))?,
        )),
        false => None,
    };
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let t = a.timeout;
    let opts = blackbox::Options {
        seed,
        cases: a.cases,
        seconds: a.seconds.map(|d| d.as_secs_f64()),
        edition: a.edition.parse::<Edition>().map_err(|e| e.to_string())?,
        subject: match &stub {
            Some(stub) => Target::with_stub(subject, std::sync::Arc::clone(stub)),
            None => Target::new(subject),
        },
        reference: Target::new(reference),
        differential: a.against_reference,
        allowlist: allowlist(a.allowlist.as_deref())?,
        out: Some(a.out.clone()),
        deadlines: Deadlines {
            barrier: t,
            settle: t,
            exit: t.max(Duration::from_secs(10)),
            adapt: Some(blackbox::latency::Adapt::default()),
        },
        shrink_trials: a.shrink_trials,
        shrink_time: Duration::from_secs(120),
        verify: !a.no_verify,
        progress: true,
        strict_upstream: a.strict_upstream,
        jobs: usize::from(a.jobs),
        processes: match a.processes {
            Processes::Fresh => blackbox::ProcessMode::Fresh,
            Processes::Shared => blackbox::ProcessMode::Shared,
            Processes::Auto if a.against_reference => blackbox::ProcessMode::Shared,
            Processes::Auto => blackbox::ProcessMode::Auto,
        },
        shard: a.shard.unwrap_or_default(),
        tools,
        model_stub: stub.is_some(),
        cancel: dsh_conformance::runner::Cancel::new(),
    };
    Ok(opts)
}

/// The runtime under test's command, the reference runtime's (the kit's own, of the edition and
/// profile asked for), and the profile whose tools the sequences call.
fn commands(
    a: &FuzzArgs,
) -> Result<
    (
        dsh_conformance::runner::CommandSpec,
        dsh_conformance::runner::CommandSpec,
        Option<dsh_conformance::runtime::Profile>,
    ),
    String,
> {
    use dsh_conformance::runner::CommandSpec;
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find its own executable: {e}"))?;
    let mut reference = CommandSpec::new(&exe)
        .arg("runtime")
        .arg("--edition")
        .arg(a.edition.clone());
    let tools = a.profile.as_deref().map(str::parse).transpose()?;
    if let Some(p) = &a.profile {
        reference = reference.arg("--profile").arg(p.clone());
    }
    let subject = match a.cmd.is_empty() {
        true => reference.clone(),
        false => CommandSpec::from_argv(&a.cmd).ok_or("empty runtime command")?,
    };
    Ok((subject, reference, tools))
}

/// `--allowlist`'s entries (none without it).
fn allowlist(
    path: Option<&std::path::Path>,
) -> Result<dsh_conformance::blackbox::Allowlist, String> {
    let Some(p) = path else {
        return Ok(Default::default());
    };
    std::fs::read_to_string(p)
        .map_err(|e| format!("{}: {e}", p.display()))
        .and_then(|t| dsh_conformance::blackbox::Allowlist::parse(&t, &p.display().to_string()))
        .map_err(|e| format!("--allowlist: {e}"))
}
