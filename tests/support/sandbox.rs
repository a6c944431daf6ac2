//! Which host a recording of the release was made on (its meta line's `sandbox`: `bwrap`, or
//! none), and making this host match: a `PATH` that hides `bwrap` for recordings made without a
//! sandbox backend, and a skip (a failure under `CI=true`) for those made with one where this
//! host has none.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The sandbox backend a recording's host had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// None usable: every `sdk` bash call was refused.
    NoBackend,
    /// Bubblewrap: `sdk` bash ran under it.
    Bwrap,
}

/// The host of a raw recording (`fixtures/real-0.2.1rc2/raw/*.jsonl`): its meta line's
/// `sandbox`; recordings without one predate bubblewrap on the recording host.
pub fn of_recording(path: &Path) -> Host {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let first: Value = text
        .lines()
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    match first["meta"]["sandbox"].as_str() {
        Some("bwrap") => Host::Bwrap,
        _ => Host::NoBackend,
    }
}

/// The host of a trace: `# requires: sandbox` marks one recorded with bubblewrap.
pub fn of_trace(requires: &[String]) -> Host {
    if requires.iter().any(|r| r == "sandbox") {
        Host::Bwrap
    } else {
        Host::NoBackend
    }
}

/// Whether this host can replay recordings made with bubblewrap; `false` after saying why
/// (never under `CI=true`, where a missing bubblewrap fails the test).
pub fn bwrap_usable(what: &str) -> bool {
    if dsh_conformance::runtime::sandbox::Sandbox::host_is_usable() {
        return true;
    }
    let ci = std::env::var("CI").unwrap_or_default();
    assert!(
        ci.is_empty() || ci == "false" || ci == "0",
        "CI={ci}: {what} needs a usable bubblewrap (apt-get install bubblewrap)"
    );
    eprintln!("skipped: {what}: no usable bwrap on PATH (apt-get install bubblewrap)");
    false
}

/// A `PATH` with every program of this one but `bwrap` (a directory of links under `target/`),
/// so a runtime started with it finds no sandbox backend.
pub fn path_without_bwrap() -> String {
    static DIR: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        // Built beside its final name, then moved there (another test process may race).
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("path-without-bwrap");
        let tmp = dir.with_extension(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        for d in std::env::split_paths(&path) {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let link = tmp.join(e.file_name());
                if e.file_name() != "bwrap" && std::fs::symlink_metadata(&link).is_err() {
                    let _ = std::os::unix::fs::symlink(e.path(), link);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::rename(&tmp, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        dir.to_string_lossy().into_owned()
    })
    .clone()
}
