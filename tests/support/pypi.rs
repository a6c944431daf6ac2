//! Installing the official Python SDK and the real upstream runtime from PyPI into a cached venv.
//!
//! The interop tests that need them run by default and never pass without running: they call
//! [`need_venv`] or [`need_real_runtime`], which fail the test when the venv cannot be had, with
//! pip's reason. [`venv`] tells the one excusable reason apart ([`PipFailure::Unreachable`]: no
//! route to the registry) from the rest: a package or version the registry does not have (a
//! typo, a yanked or deleted release) and anything else (no python3, a broken venv) are errors.
//!
//! Offline, `DSH_ALLOW_OFFLINE=1 cargo test` compiles these tests as ignored (`cfg(dsh_offline)`,
//! set by build.rs), so that `cargo test`'s summary counts them as ignored rather than passed;
//! `-- --include-ignored` runs them anyway. Under CI that mode is refused (a test fails).
//! The venv lives under `target/dsh-pyenv/<name>` and is reused while its package list matches.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// A ready venv.
#[derive(Debug, Clone)]
pub struct PyEnv {
    /// The venv folder.
    pub dir: PathBuf,
    /// Its python interpreter.
    pub python: PathBuf,
}

/// The official client SDK.
pub const SDK: &str = "deepseek-harness-sdk";
/// The real upstream runtime (a ~95 MB wheel holding a Linux x64 executable).
pub const RUNTIME_BIN: &str = "deepseek-harness-runtime-bin";

fn target_dir() -> PathBuf {
    if let Ok(t) = std::env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(t);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target")
}

/// Why `pip install` failed, from its stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipFailure {
    /// The registry could not be reached (no route, DNS, refused, timed out, a proxy, TLS).
    Unreachable,
    /// The registry answered, and has no such package or version: a typo, or a release yanked
    /// or deleted. An error, never a reason to skip.
    NotFound,
    /// Anything else (a build failure, a broken venv, a bad requirement).
    Other,
}

/// What pip (and the urllib3 under it) writes when it cannot talk to the registry.
const UNREACHABLE: &[&str] = &[
    "NewConnectionError",
    "Failed to establish a new connection",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "Read timed out",
    "ProxyError",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No route to host",
    "Connection refused",
    "Connection reset by peer",
    "RemoteDisconnected",
    "Max retries exceeded",
    "Could not fetch URL",
    "SSLError",
];

/// Classifies a failed `pip install` by its stderr. Offline, pip also ends with "Could not find
/// a version … (from versions: none)" and "No matching distribution found": those lines mean
/// "not found" only when no connection failure came before them.
pub fn classify(stderr: &str) -> PipFailure {
    if UNREACHABLE.iter().any(|m| stderr.contains(m)) {
        PipFailure::Unreachable
    } else if stderr.contains("No matching distribution found")
        || stderr.contains("Could not find a version that satisfies the requirement")
    {
        PipFailure::NotFound
    } else {
        PipFailure::Other
    }
}

/// Installs `packages` into the venv `name` (once per process, cached across runs). `Err` only
/// when the registry cannot be reached (the reason is remembered: later calls fail at once);
/// any other failure panics.
pub fn venv(name: &str, packages: &[&str]) -> Result<PyEnv, String> {
    venv_with(Path::new("python3"), name, packages)
}

/// Like [`venv`], made with the interpreter `python` (a package that needs a newer Python).
pub fn venv_with(python: &Path, name: &str, packages: &[&str]) -> Result<PyEnv, String> {
    let interpreter = python;
    static LOCK: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let mut unreachable = LOCK
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(reason) = unreachable.get(name) {
        return Err(reason.clone());
    }
    let dir = target_dir().join("dsh-pyenv").join(name);
    let python = dir.join("bin").join("python");
    let stamp = dir.join(".installed");
    let wanted = packages.join("\n");
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(PyEnv { dir, python });
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.parent().unwrap()).expect("create target/dsh-pyenv");
    let made = Command::new(interpreter)
        .args(["-m", "venv"])
        .arg(&dir)
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "{} -m venv failed: {}",
            interpreter.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "{} is needed for the PyPI interop tests and could not be run: {e}",
            interpreter.display()
        ),
    }
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "-q",
            // Retries make pip name a connection failure (as a retry warning): without them an
            // unreachable index reads like a missing package ("from versions: none").
            "--retries",
            "3",
        ])
        .args(packages)
        .output()
        .expect("run pip");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        match classify(&err) {
            PipFailure::Unreachable => {
                let reason = format!(
                    "pip could not reach the registry for {}: {}",
                    packages.join(" "),
                    first_connection_error(&err)
                );
                unreachable.insert(name.to_owned(), reason.clone());
                return Err(reason);
            }
            PipFailure::NotFound => panic!(
                "pip install {}: the registry has no such package or version (a typo, or a \
                 release yanked or deleted):\n{err}",
                packages.join(" ")
            ),
            PipFailure::Other => panic!(
                "pip install {} failed for a reason other than reachability:\n{err}",
                packages.join(" ")
            ),
        }
    }
    std::fs::write(&stamp, &wanted).expect("write venv stamp");
    Ok(PyEnv { dir, python })
}

/// The first line that says why the connection failed (else the last line).
fn first_connection_error(s: &str) -> &str {
    s.lines()
        .find(|l| UNREACHABLE.iter().any(|m| l.contains(m)))
        .or_else(|| s.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or(s)
        .trim()
}

/// Like [`venv`], but fails the test `test` when the registry cannot be reached.
pub fn need_venv(test: &str, name: &str, packages: &[&str]) -> PyEnv {
    venv(name, packages).unwrap_or_else(|reason| {
        panic!(
            "{test} needs PyPI: {reason}\n\
             Offline, `DSH_ALLOW_OFFLINE=1 cargo test` reports the PyPI-backed tests as ignored \
             (never under CI)."
        )
    })
}

/// A Python 3.13 interpreter (dsh-conductor requires it): `python3.13` on `PATH`, else pyenv's.
pub fn python313() -> PathBuf {
    // A pyenv shim on PATH may name a version that is not selected: run it to know.
    let runs = |p: &Path| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Some(p) = which("python3.13").filter(|p| runs(p)) {
        return p;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let versions = Path::new(&home).join(".pyenv/versions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&versions)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("3.13"))
        .map(|e| e.path().join("bin/python3.13"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("dsh-conductor needs Python 3.13: no python3.13 on PATH nor under ~/.pyenv/versions")
    })
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Like [`need_venv`], made with the interpreter `python`.
pub fn need_venv_with(python: &Path, test: &str, name: &str, packages: &[&str]) -> PyEnv {
    venv_with(python, name, packages).unwrap_or_else(|reason| {
        panic!("{test} needs PyPI: {reason} (DSH_ALLOW_OFFLINE=1 reports it as ignored)")
    })
}

/// The real runtime's executable inside a venv that has [`RUNTIME_BIN`].
pub fn real_runtime_executable(env: &PyEnv) -> PathBuf {
    let out = Command::new(&env.python)
        .args([
            "-c",
            "import deepseek_harness_runtime, os; print(os.path.dirname(deepseek_harness_runtime.__file__))",
        ])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "import deepseek_harness_runtime: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pkg = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let exe = pkg
        .join("runtime")
        .join("deepseek-harness-sdk-runtime-linux-x64");
    assert!(
        exe.is_file(),
        "the runtime wheel has no executable at {}",
        exe.display()
    );
    exe
}

/// The real runtime, installed (the test `test` fails when PyPI cannot be reached).
pub fn need_real_runtime(test: &str) -> PathBuf {
    real_runtime_executable(&need_venv(test, "real-runtime", &[RUNTIME_BIN]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pip install` of a package whose index refuses the connection (captured, pip 23.2).
    const REFUSED: &str = "\
WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at 0x7fdb79082b50>: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/deepseek-harness-sdk/
WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at 0x7fdb7908ea90>: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/deepseek-harness-sdk/
ERROR: Could not find a version that satisfies the requirement deepseek-harness-sdk (from versions: none)
ERROR: No matching distribution found for deepseek-harness-sdk
";

    /// No DNS (the form pip writes on a machine without a resolver).
    const NO_DNS: &str = "\
WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f3b2c1d0a90>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/deepseek-harness-runtime-bin/
ERROR: Could not find a version that satisfies the requirement deepseek-harness-runtime-bin (from versions: none)
ERROR: No matching distribution found for deepseek-harness-runtime-bin
";

    /// A proxy that is down (captured).
    const PROXY: &str = "\
WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ProxyError('Cannot connect to proxy.', NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7ff76c280b50>: Failed to establish a new connection: [Errno 111] Connection refused'))': /simple/deepseek-harness-sdk/
ERROR: Could not find a version that satisfies the requirement deepseek-harness-sdk (from versions: none)
ERROR: No matching distribution found for deepseek-harness-sdk
";

    /// An index that accepts and never answers (captured, `--timeout 1`).
    const TIMEOUT: &str = "\
WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPConnectionPool(host='127.0.0.1', port=18765): Read timed out. (read timeout=1.0)\")': /simple/deepseek-harness-sdk/
ERROR: Could not find a version that satisfies the requirement deepseek-harness-sdk (from versions: none)
ERROR: No matching distribution found for deepseek-harness-sdk
";

    /// A version the registry does not have (captured).
    const NO_VERSION: &str = "\
ERROR: Could not find a version that satisfies the requirement deepseek-harness-sdk==0.0.0.999 (from versions: 0.0.0.dev0, 0.1.0rc6, 0.1.0rc7, 0.1.1rc1, 0.1.2a3, 0.1.2rc1, 0.1.5rc1, 0.2.1rc2)
ERROR: No matching distribution found for deepseek-harness-sdk==0.0.0.999
";

    /// A package name the registry does not have (a typo).
    const NO_PACKAGE: &str = "\
ERROR: Could not find a version that satisfies the requirement deepseek-harnes-sdk (from versions: none)
ERROR: No matching distribution found for deepseek-harnes-sdk
";

    #[test]
    fn only_connection_failures_count_as_an_unreachable_registry() {
        for (name, err) in [
            ("refused", REFUSED),
            ("dns", NO_DNS),
            ("proxy", PROXY),
            ("timeout", TIMEOUT),
        ] {
            assert_eq!(classify(err), PipFailure::Unreachable, "{name}");
        }
        assert_eq!(classify(NO_VERSION), PipFailure::NotFound);
        assert_eq!(classify(NO_PACKAGE), PipFailure::NotFound);
        assert_eq!(
            classify("ERROR: Invalid requirement: 'x=='\n"),
            PipFailure::Other
        );
    }

    #[test]
    fn the_reason_names_the_connection_error() {
        assert!(first_connection_error(NO_DNS).contains("Temporary failure in name resolution"));
        assert!(first_connection_error(TIMEOUT).contains("Read timed out"));
    }

    /// `DSH_ALLOW_OFFLINE=1` turns the PyPI-backed tests into ignored ones: never under CI.
    #[cfg(dsh_offline)]
    #[test]
    fn offline_mode_is_refused_under_ci() {
        let ci = std::env::var("CI").unwrap_or_default();
        assert!(
            ci.is_empty() || ci == "false" || ci == "0",
            "DSH_ALLOW_OFFLINE=1 under CI={ci}: the PyPI-backed tests were compiled as ignored"
        );
    }
}
