//! `bench`: stdio figures for any runtime.

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
    /// Start the scripted model stub and pass its DEEPSEEK_* and OPENAI_* environment (for runtimes that call a model).
    #[arg(long)]
    model_stub: bool,
    /// Deadline of each workload, in seconds (a runtime silent for 30 s while answers are due is
    /// given up on sooner).
    #[arg(long, value_name = "D", default_value = "300s", value_parser = crate::args::duration, allow_negative_numbers = true)]
    timeout: std::time::Duration,
    /// The runtime command (default: the built-in reference runtime).
    #[arg(last = true)]
    cmd: Vec<std::ffi::OsString>,
}

/// One `bench` workload.
enum Workload {
    ColdStart,
    CheapFrames,
    EchoPrompts,
    SessionsRss(usize),
}

pub(crate) fn bench(a: BenchArgs) -> i32 {
    use dsh_conformance::loadgen;
    use dsh_conformance::runner::CommandSpec;
    let argv = if a.cmd.is_empty() {
        match std::env::current_exe() {
            Ok(exe) => vec![
                exe.into_os_string(),
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
    if let Err(e) = validate(&a) {
        eprintln!("dsh-conformance bench: {e}");
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
        timeout: a.timeout,
    };
    dsh_conformance::outln!("runtime: {cmd}");
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
            a.timeout.as_secs_f64()
        );
        let r = w.run(&t, &a);
        match r {
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

/// Every count must be at least 1 (`--frames 0` used to wait out a deadline).
fn validate(a: &BenchArgs) -> Result<(), String> {
    let counts = [
        ("--frames", a.frames),
        ("--prompts", a.prompts),
        ("--prompt-sessions", a.prompt_sessions),
        ("--cold-runs", a.cold_runs),
    ];
    if let Some((flag, _)) = counts.iter().find(|(_, n)| *n == 0) {
        return Err(format!("{flag} must be at least 1"));
    }
    if a.sessions.contains(&0) {
        return Err("--sessions counts must be at least 1".into());
    }
    Ok(())
}

impl Workload {
    /// Its row name and what it does, for the table and the progress line.
    fn label(&self, a: &BenchArgs) -> (String, String) {
        match self {
            Workload::ColdStart => (
                "cold start → initialize".to_owned(),
                format!("{} processes", a.cold_runs),
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

    /// Runs it against `t`; the figure as the table shows it.
    fn run(
        &self,
        t: &dsh_conformance::loadgen::Target,
        a: &BenchArgs,
    ) -> Result<String, dsh_conformance::loadgen::Error> {
        use dsh_conformance::loadgen;
        match self {
            Workload::ColdStart => loadgen::cold_start(t, a.cold_runs).map(|d| {
                format!(
                    "{:.2} ms (median of {})",
                    d.as_secs_f64() * 1e3,
                    a.cold_runs
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
