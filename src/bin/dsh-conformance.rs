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

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Cmd::Runtime { args } => dsh_conformance::runtime::serve_stdio(&args),
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
