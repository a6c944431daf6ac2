//! The page issue 24 is done with: the reference, the release (PyPI 0.2.1rc2, with its baseline and
//! the model stub) and a broken runtime side by side, built once per test run by the command line
//! into `target/dsh-html/` (where `.ci/run` finds it). Outside CI, the release's column is left out
//! (with the reason printed) only when PyPI cannot be reached.

use super::super::{KIT, RUNTIME};
use crate::support::pypi;
use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A runtime that prints markup on stderr before it serves, behind the `no-idle` mutant.
const HOSTILE: &str = "echo '<script>document.body.setAttribute(\"data-pwned\",\"1\")</script><img src=x onerror=alert(1)>' >&2; exec \"$0\" mutant no-idle -- \"$1\"";
/// The check the broken runtime fails.
pub const BROKEN: &str = "status.idle-after-turn";
/// The release's known bug (`fixtures/real-0.2.1rc2.known-failing`).
pub const KNOWN: &str = "lifecycle.shutdown-after-empty-session-id";
/// The checks the release is run on (it is slow): its known bug, the broken runtime's check, and a
/// stream rule.
const RELEASE_CHECKS: [&str; 3] = [KNOWN, BROKEN, "stdout.frames-only"];

/// The built page and where each runtime's column is (1-based, as the cells' ids count).
pub struct SideBySide {
    /// The page.
    pub page: PathBuf,
    /// The JSON report of the broken runtime.
    pub broken_report: PathBuf,
    /// The broken runtime's column (the last).
    pub broken: usize,
    /// The release's column, when PyPI could be reached.
    pub release: Option<usize>,
}

/// The page, built by the first test that asks.
pub fn side_by_side() -> &'static SideBySide {
    static PAGE: OnceLock<SideBySide> = OnceLock::new();
    PAGE.get_or_init(build)
}

fn out_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("dsh-html");
    // A page left by an earlier run is never taken for this one's.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn check(out: &Path, flags: &[&str], cmd: &[&std::ffi::OsStr], code: i32) {
    Command::new(KIT)
        .args(["check", "--format", "json", "--jobs", "2", "--output"])
        .arg(out)
        .args(flags)
        .arg("--")
        .args(cmd)
        .timeout(std::time::Duration::from_secs(600))
        .assert()
        .code(code);
}

/// The release's executable, or `None` (after saying why) when PyPI is unreachable outside CI.
fn release() -> Option<PathBuf> {
    let why = if cfg!(dsh_offline) {
        "DSH_ALLOW_OFFLINE=1".to_owned()
    } else {
        match pypi::venv("real-runtime", &[pypi::RUNTIME_BIN]) {
            Ok(env) => return Some(pypi::real_runtime_executable(&env)),
            Err(reason) => reason,
        }
    };
    let ci = std::env::var("CI").unwrap_or_default();
    assert!(
        ci.is_empty() || ci == "false" || ci == "0",
        "CI={ci}: the side-by-side page needs the release from PyPI: {why}"
    );
    eprintln!("skipped: the release's column of the side-by-side page ({why})");
    None
}

fn build() -> SideBySide {
    let dir = out_dir();
    let (good, rel, bad, page) = (
        dir.join("reference.json"),
        dir.join("release.json"),
        dir.join("broken.json"),
        dir.join("side-by-side.html"),
    );
    let mut reports = vec![good.clone()];
    Command::new(KIT)
        .args(["check", "--format", "json", "--jobs", "2", "--output"])
        .arg(&good)
        .assert()
        .code(0);
    let release = release().map(|exe| {
        let baseline =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-0.2.1rc2.known-failing");
        let mut flags = vec![
            "--model-stub",
            "--known-failing",
            baseline.to_str().unwrap(),
        ];
        for c in RELEASE_CHECKS {
            flags.extend(["--filter", c]);
        }
        check(
            &rel,
            &flags,
            &[exe.as_os_str(), "--profile".as_ref(), "sdk".as_ref()],
            0,
        );
        reports.push(rel.clone());
        reports.len()
    });
    let cmd: [&std::ffi::OsStr; 5] = ["sh", "-c", HOSTILE, KIT, RUNTIME].map(AsRef::as_ref);
    check(&bad, &[], &cmd, 1);
    reports.push(bad.clone());
    Command::new(KIT)
        .args(["report", "--html"])
        .arg(&page)
        .args(&reports)
        .assert()
        .code(0);
    SideBySide {
        page,
        broken_report: bad,
        broken: reports.len(),
        release,
    }
}
