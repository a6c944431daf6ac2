//! `bench`: stdio figures for any runtime.

use dsh_conformance::loadgen::{self, Target};
use dsh_conformance::model_stub::ModelStub;
use dsh_conformance::runner::CommandSpec;
use std::time::Duration;

#[derive(clap::Args)]
pub(crate) struct BenchArgs {
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

pub(crate) fn bench(a: BenchArgs) -> i32 {
    // The stub, if any, serves until the last workload is done.
    let (t, _stub) = match target(&a) {
        Ok(started) => started,
        Err(e) => {
            eprintln!("dsh-conformance bench: {e}");
            return 2;
        }
    };
    dsh_conformance::outln!("runtime: {}", t.cmd);
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
        let (name, what) = w.label(&a);
        if let Some(why) = &skip {
            dsh_conformance::outln!("{name:<28} skipped: {why}");
            continue;
        }
        eprintln!(
            "bench: {}/{total} {name}: {what} (deadline {} s)",
            i + 1,
            a.timeout
        );
        match w.run(&t, &a) {
            Ok(v) => dsh_conformance::outln!("{name:<28} {v}"),
            Err(e) => {
                failed = true;
                dsh_conformance::outln!("{name:<28} FAILED: {e}");
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

/// The runtime the workloads run against (and the model stub it talks to, if asked for);
/// `Err`: why it cannot be.
fn target(a: &BenchArgs) -> Result<(Target, Option<ModelStub>), String> {
    let argv = if a.cmd.is_empty() {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find its own executable: {e}"))?;
        vec![
            exe.display().to_string(),
            "runtime".into(),
            "--profile".into(),
            "sdk".into(),
        ]
    } else {
        a.cmd.clone()
    };
    // A relative program or script path means the caller's directory, not the runtime's fresh one.
    let cmd = CommandSpec::from_argv(&argv).ok_or("empty runtime command")?;
    if a.timeout == 0 {
        return Err("--timeout must be a positive number of seconds".into());
    }
    let stub = if a.model_stub {
        let s = ModelStub::start().map_err(|e| format!("cannot start the model stub: {e}"))?;
        Some(s)
    } else {
        None
    };
    let t = Target {
        cmd,
        env: stub.as_ref().map(|s| s.env()).unwrap_or_default(),
        timeout: Duration::from_secs(a.timeout),
    };
    Ok((t, stub))
}

impl Workload {
    /// Its name and what it runs, for the progress line.
    fn label(&self, a: &BenchArgs) -> (String, String) {
        match self {
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
        }
    }

    /// Runs it against `t`: its figure, in words.
    fn run(&self, t: &Target, a: &BenchArgs) -> Result<String, loadgen::Error> {
        match self {
            Workload::ColdStart => loadgen::cold_start(t, a.cold_runs).map(|d| {
                format!(
                    "{:.2} ms (median of {})",
                    d.as_secs_f64() * 1e3,
                    a.cold_runs.max(1)
                )
            }),
            Workload::CheapFrames => loadgen::cheap_frames(t, a.frames)
                .map(|r| format!("{r:.0} frames/s ({} probe/x requests)", a.frames)),
            Workload::EchoPrompts => {
                loadgen::echo_prompts(t, a.prompts, a.prompt_sessions).map(|(r, lines)| {
                    format!(
                        "{r:.0} prompts/s ({} prompts, {lines} frames read)",
                        a.prompts
                    )
                })
            }
            Workload::SessionsRss(n) => {
                loadgen::sessions_rss(t, *n).map(|kib| format!("{:.1} MB", kib as f64 / 1024.0))
            }
        }
    }
}
