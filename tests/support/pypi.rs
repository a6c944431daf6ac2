//! Installing the official Python SDK and the real upstream runtime from PyPI into a cached venv.
//!
//! Tests that need them call [`venv`]: it returns the venv, or `Err(reason)` only when pip could not
//! get the package (no route to the registry, package or version not found). Any other failure
//! (no python3, a broken venv) panics: a test must never skip silently for a fixable reason.
//! The venv lives under `target/dsh-pyenv/<name>` and is reused while its package list matches.

#![allow(dead_code)]

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

/// Installs `packages` into the venv `name` (once per process, cached across runs).
pub fn venv(name: &str, packages: &[&str]) -> Result<PyEnv, String> {
    static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
    let _guard = LOCK
        .get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = target_dir().join("dsh-pyenv").join(name);
    let python = dir.join("bin").join("python");
    let stamp = dir.join(".installed");
    let wanted = packages.join("\n");
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(PyEnv { dir, python });
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.parent().unwrap()).expect("create target/dsh-pyenv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&dir)
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "python3 -m venv failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!("python3 is needed for the PyPI interop tests and could not be run: {e}"),
    }
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "-q",
        ])
        .args(packages)
        .output()
        .expect("run pip");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let unreachable = [
            "Could not find a version",
            "No matching distribution",
            "connection",
            "Connection",
            "Temporary failure in name resolution",
            "Network is unreachable",
            "timed out",
            "HTTPError",
            "ProxyError",
        ];
        if unreachable.iter().any(|m| err.contains(m)) {
            return Err(format!(
                "pip could not install {}: {}",
                packages.join(" "),
                last_line(&err)
            ));
        }
        panic!(
            "pip install {} failed for a reason other than reachability:\n{err}",
            packages.join(" ")
        );
    }
    std::fs::write(&stamp, &wanted).expect("write venv stamp");
    Ok(PyEnv { dir, python })
}

fn last_line(s: &str) -> &str {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(s)
}

/// Like [`venv`], but prints `SKIP <test>: <reason>` and returns `None` when pip cannot reach the package.
pub fn venv_or_skip(test: &str, name: &str, packages: &[&str]) -> Option<PyEnv> {
    match venv(name, packages) {
        Ok(v) => Some(v),
        Err(reason) => {
            eprintln!("SKIP {test}: {reason}");
            println!("SKIP {test}: {reason}");
            None
        }
    }
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

/// The real runtime, installed (or `None` with a printed reason when PyPI cannot be reached).
pub fn real_runtime_or_skip(test: &str) -> Option<PathBuf> {
    venv_or_skip(test, "real-runtime", &[RUNTIME_BIN]).map(|e| real_runtime_executable(&e))
}
