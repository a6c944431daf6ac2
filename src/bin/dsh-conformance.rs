//! The kit's command line: thin argument parsing over the library. Exit codes: 0 pass, 1 findings,
//! 2 usage error or a runtime that cannot be started.

use clap::{Parser, Subcommand};

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
    /// Serve the built-in reference runtime on stdio (same as `dsh-reference-runtime`).
    #[command(disable_help_flag = true)]
    Runtime {
        /// Arguments for the runtime: [--profile sdk|sdk-minimal] [--edition current|2026-08|legacy] [--help]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Measure a runtime through its stdio: cold start, cheap frames/s, echo prompts/s, RSS per sessions.
    Bench(BenchArgs),
    /// Run a deliberately broken runtime: a proxy in front of CMD that breaks one rule (for self-tests).
    #[command(hide = true)]
    Mutant {
        /// The mutant's name (`list` prints them all).
        name: String,
        /// The runtime command to wrap.
        #[arg(last = true)]
        cmd: Vec<String>,
    },
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
    /// Deadline of each workload, in seconds.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// The runtime command (default: the built-in reference runtime).
    #[arg(last = true)]
    cmd: Vec<String>,
}

fn bench(a: BenchArgs) -> i32 {
    use dsh_conformance::loadgen;
    let cmd = if a.cmd.is_empty() {
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
        timeout: std::time::Duration::from_secs(a.timeout),
    };
    println!("runtime: {}", cmd.join(" "));
    let mut failed = false;
    let mut report = |name: &str, r: Result<String, String>| match r {
        Ok(v) => println!("{name:<28} {v}"),
        Err(e) => {
            failed = true;
            println!("{name:<28} FAILED: {e}")
        }
    };
    report(
        "cold start → initialize",
        loadgen::cold_start(&t, a.cold_runs).map(|d| {
            format!(
                "{:.2} ms (median of {})",
                d.as_secs_f64() * 1e3,
                a.cold_runs
            )
        }),
    );
    report(
        "cheap frames",
        loadgen::cheap_frames(&t, a.frames)
            .map(|r| format!("{r:.0} frames/s ({} probe/x requests)", a.frames)),
    );
    report(
        "echo prompts",
        loadgen::echo_prompts(&t, a.prompts, a.prompt_sessions).map(|(r, lines)| {
            format!(
                "{r:.0} prompts/s ({} prompts, {lines} frames read)",
                a.prompts
            )
        }),
    );
    for n in &a.sessions {
        report(
            &format!("RSS with {n} sessions"),
            loadgen::sessions_rss(&t, *n).map(|kib| format!("{:.1} MB", kib as f64 / 1024.0)),
        );
    }
    i32::from(failed)
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Cmd::Runtime { args } => dsh_conformance::runtime::serve_stdio(&args),
        Cmd::Bench(a) => bench(a),
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
