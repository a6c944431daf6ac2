//! The kit's command line: thin argument parsing over the library. Exit codes: 0 pass, 1 findings,
//! 2 usage error, a runtime that cannot be started or a report that cannot be written, 5 nothing
//! tested.

use clap::{Parser, Subcommand};

mod args;
mod bench;
mod check;
mod client;
mod fuzz;
mod import;
mod list;
mod record;
mod replay;
mod report;

use bench::{bench, BenchArgs};
use check::{check, CheckArgs};
use fuzz::{fuzz, FuzzArgs};
use import::ImportArgs;
use record::RecordArgs;
use replay::ReplayArgs;
use report::ReportArgs;

#[derive(Parser)]
#[command(
    name = "dsh-conformance",
    version,
    about = "Wire-conformance test kit, reference runtime and fuzzer for the DeepSeek Harness SDK runtime protocol",
    long_about = "Wire-conformance test kit, reference runtime and fuzzer for the DeepSeek Harness SDK runtime \
protocol (newline-delimited JSON-RPC 2.0 over a child process's stdio).\n\n\
Point it at a runtime with `-- <cmd> <args>`; with no runtime named it uses its own built-in reference runtime.\n\
Exit codes: 0 all MUST checks pass, 1 findings, 2 usage error, the runtime cannot be started or the \
report cannot be written, 5 nothing was tested (every selected check skipped), 128+N stopped by signal N."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the conformance suite against a runtime (default: the built-in reference runtime).
    Check(CheckArgs),
    /// Judge a client: the kit plays the runtime (`client -- <driver cmd>`, docs/CLIENT-DRIVERS.md).
    Client(client::ClientArgs),
    /// The runtime the `client` shim launches (internal).
    #[command(hide = true)]
    ClientPeer {
        #[arg(long)]
        port: u16,
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// The reference client behind the driver protocol (internal; `--bug` picks a mutant).
    #[command(hide = true)]
    ClientDriver {
        #[arg(long)]
        bug: Option<String>,
    },
    /// The reference app: runs one prompt on the reference client (internal; `--bug` picks a mutant).
    #[command(hide = true)]
    ClientApp {
        #[arg(long)]
        bug: Option<String>,
    },
    Replay(ReplayArgs),
    Record(RecordArgs),
    Import(ImportArgs),
    Report(ReportArgs),
    /// Run a runtime behind a transparent stdio proxy and write the live session as a golden trace
    /// (put it where a client expects its runtime binary).
    Tap {
        /// The golden trace to write when the runtime ends (`--out` is an older spelling).
        #[arg(
            short = 'o',
            long = "output",
            visible_alias = "out",
            value_name = "FILE"
        )]
        out: std::path::PathBuf,
        /// Also write the raw transcript (the layout `import` reads).
        #[arg(long, value_name = "FILE")]
        raw: Option<std::path::PathBuf>,
        /// The trace's case name.
        #[arg(long, default_value = "tapped-session")]
        case: String,
        /// The runtime command line (the client's arguments follow it).
        #[arg(last = true, required = true)]
        cmd: Vec<std::ffi::OsString>,
    },
    /// Serve the scripted model stub in the foreground: prints the environment to export, logs each
    /// request, ends on Ctrl-C.
    ModelStub {
        /// Port on 127.0.0.1 (0: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Stop after this long: seconds, or a number with a unit (default: until SIGINT/SIGTERM).
        #[arg(long, value_name = "D", value_parser = args::duration, allow_negative_numbers = true)]
        seconds: Option<std::time::Duration>,
    },
    /// Print a check's rule, the docs/CONTRACT.md sections it cites (quoted) and its traces.
    Explain {
        /// The check id (see `check --list`; client checks: `client --list`).
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
    /// Run a deliberately broken runtime: a proxy in front of CMD that breaks one rule (to see a
    /// check catch it; `mutant list` names them and the check each one fails).
    Mutant {
        /// The mutant's name, or several comma-separated (`a,b,c`: stacked, `a` closest to the
        /// client); `list` prints them all.
        name: String,
        /// The runtime command to wrap.
        #[arg(last = true)]
        cmd: Vec<std::ffi::OsString>,
    },
}

fn explain(id: &str) -> i32 {
    match dsh_conformance::suite::explain::explain(id) {
        Ok(explanation) => {
            dsh_conformance::out!("{explanation}");
            0
        }
        Err(e) => {
            eprintln!("dsh-conformance explain: {e}");
            2
        }
    }
}

fn main() {
    let cli = Cli::parse();
    // `check` and `fuzz` stop gracefully (partial report; fuzz: its summary and findings.json);
    // these end at once, leaving nothing behind.
    let abrupt = match &cli.command {
        Cmd::Replay(_) => Some("replay"),
        Cmd::Record(_) => Some("record"),
        Cmd::Bench(_) => Some("bench"),
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
        Cmd::Client(a) => client::client(a),
        Cmd::ClientPeer { port, args } => client::peer(port, &args),
        Cmd::ClientDriver { bug } => client::driver(bug.as_deref()),
        Cmd::ClientApp { bug } => client::app(bug.as_deref()),
        Cmd::Replay(a) => a.run(),
        Cmd::Record(a) => a.run(),
        Cmd::Import(a) => a.run(),
        Cmd::Report(a) => a.run(),
        Cmd::Explain { id } => explain(&id),
        Cmd::ModelStub { port, seconds } => {
            dsh_conformance::model_stub::serve::serve(port, seconds.map(|d| d.as_secs_f64()))
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
                    dsh_conformance::outln!(
                        "{:<24} {:<36} {}",
                        m.name,
                        m.catches.map_or("", |c| c.as_str()),
                        m.breaks
                    );
                }
                // The proxies that break no rule: no check may fail on them.
                for m in dsh_conformance::mutants::BENIGN {
                    dsh_conformance::outln!(
                        "{:<24} {:<36} {}",
                        m.name,
                        "(none: must pass)",
                        m.breaks
                    );
                }
                0
            } else {
                dsh_conformance::mutants::run(&name, &cmd)
            }
        }
    };
    // A signal's cleanup kills the runtime, and the command may finish first with the failure
    // that caused: the signal decides the exit code then.
    let code = match abrupt {
        Some(what) => dsh_conformance::runner::cleanup::exit_code(code, what),
        None => code,
    };
    // A report that could not be written (stdout on a full disk) is a run that did not deliver.
    let code = if dsh_conformance::out::write_failed() {
        code.max(2)
    } else {
        code
    };
    std::process::exit(code);
}
