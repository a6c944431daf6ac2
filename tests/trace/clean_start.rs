//! A runtime starts with default signal dispositions and no blocked signals, whatever the kit
//! itself inherited (issue 9 item 7).

use super::root;
use std::process::Command;

const KIT: &str = env!("CARGO_BIN_EXE_dsh-conformance");

/// The kit runs with SIGINT ignored (as under `nohup` or `trap "" INT`); the mock runtime exits 130
/// on SIGINT only through Python's handler, which Python installs only if SIGINT is not ignored
/// at start-up. Without the runner's reset the runtime inherits the ignored SIGINT, never exits,
/// and the check fails after its 15 s deadline.
#[test]
fn a_runtime_gets_default_sigint_even_when_the_kit_ignores_it() {
    let mock = root().join("tests/trace/mock_runtime.py");
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"trap "" INT; exec "$@""#)
        .arg("sh")
        .arg(KIT)
        .args(["check", "--filter", "lifecycle.sigint-exits-130", "--"])
        .arg("python3")
        .arg(&mock)
        .arg("ok")
        .output()
        .expect("run the kit under sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("PASS  lifecycle.sigint-exits-130"),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}
