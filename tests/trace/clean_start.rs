//! A runtime starts with default signal dispositions and no blocked signals, whatever the kit
//! itself inherited (issue 9 item 7).

use super::root;
use crate::support::report::JsonReport;
use dsh_conformance::check::CheckId;
use std::process::Command;

const KIT: &str = env!("CARGO_BIN_EXE_dsh-conformance");

/// Runs `argv` with SIGINT ignored and blocked, as `nohup`, `trap "" INT` or a CI runner can leave
/// it. Both survive exec; the kit's own SIGINT handler replaces the ignored disposition in the kit
/// (a handler is reset to the default in a child), but not the mask, which only the runner's reset
/// clears.
const IGNORE_AND_BLOCK_SIGINT: &str = "import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
os.execvp(sys.argv[1], sys.argv[1:])";

/// The kit runs with SIGINT ignored and blocked; the mock runtime exits 130 on SIGINT only through
/// Python's handler, which Python installs only if SIGINT is not ignored at start-up, and which a
/// blocked SIGINT never reaches. Without the runner's reset the runtime inherits either, never
/// exits, and the check fails after its deadline.
#[test]
fn a_runtime_gets_default_sigint_even_when_the_kit_ignores_it() {
    let mock = root().join("tests/trace/mock_runtime.py");
    let out = Command::new("python3")
        .args(["-c", IGNORE_AND_BLOCK_SIGINT])
        .arg(KIT)
        .args(["check", "--format", "json"])
        .args(["--filter", "lifecycle.sigint-exits-130", "--"])
        .arg("python3")
        .arg(&mock)
        .arg("ok")
        .output()
        .expect("run the kit under sh");
    let report = JsonReport::parse(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        (
            out.status.code(),
            report.verdict(CheckId::LifecycleSigintExits130)
        ),
        (Some(0), "PASS"),
        "{report}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
