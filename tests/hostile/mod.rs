//! The kit against hostile runtimes (`tests/hostile/runtimes/`): whatever the runtime does, the
//! kit ends with the right exit code, within a bound of minutes, under 128 MB of peak RSS, with
//! the runtime's own words in its output and nothing left behind (no temp directory, no process).
//!
//! Each run gets its own `TMPDIR` (leftover directories are whatever remains in it) and a marker
//! in its environment that every process it starts inherits (leftover processes are those still
//! carrying it). Peak RSS is the kit process's own `VmHWM`, watched while it runs
//! ([`watch_peak_rss`] says why not `wait4`'s `ru_maxrss`).

mod check;
mod flags;
mod signals;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The kit's binary.
pub const KIT: &str = env!("CARGO_BIN_EXE_dsh-conformance");

/// The reference runtime's binary.
pub const RUNTIME_BIN: &str = env!("CARGO_BIN_EXE_dsh-reference-runtime");

/// The peak RSS every hostile run must stay under.
pub const RSS_BOUND_KB: i64 = 128 * 1024;

/// A hostile runtime script's absolute path.
pub fn runtime(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile/runtimes")
        .join(name)
        .display()
        .to_string()
}

/// What one run of the kit did.
#[derive(Debug)]
pub struct Run {
    /// Exit code (128 + N when killed by signal N).
    pub code: i32,
    /// Wall time.
    pub wall: Duration,
    /// Peak RSS in KiB (the kit, or a descendant it reaped, whichever was larger).
    pub max_rss_kb: i64,
    /// Stdout.
    pub stdout: String,
    /// Stderr.
    pub stderr: String,
    /// Entries left in the run's TMPDIR.
    pub left_dirs: Vec<PathBuf>,
    /// Processes still carrying the run's marker after it ended (killed by the test).
    pub left_procs: Vec<i32>,
}

impl Run {
    /// Asserts the invariants of every hostile run: the exit code, the bounds, nothing left.
    pub fn assert_clean(&self, code: i32, wall_bound: Duration) -> &Self {
        assert_eq!(self.code, code, "exit code\n{self}");
        assert!(self.wall < wall_bound, "took {:?}\n{self}", self.wall);
        assert!(
            self.max_rss_kb < RSS_BOUND_KB,
            "peak RSS {} KiB\n{self}",
            self.max_rss_kb
        );
        assert!(
            self.left_dirs.is_empty(),
            "left behind: {:?}",
            self.left_dirs
        );
        assert!(
            self.left_procs.is_empty(),
            "processes left: {:?}",
            self.left_procs
        );
        self
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let clip = |s: &str| s.chars().take(4000).collect::<String>();
        write!(
            f,
            "exit {} in {:.1} s, peak RSS {:.1} MB\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.wall.as_secs_f64(),
            self.max_rss_kb as f64 / 1024.0,
            clip(&self.stdout),
            clip(&self.stderr)
        )
    }
}

/// A fresh directory under target/ for one run.
fn scratch(what: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-{what}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Processes whose environment holds `needle`.
fn marked(needle: &[u8]) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if env.windows(needle.len()).any(|w| w == needle) {
                out.push(pid);
            }
        }
    }
    out
}

/// The kit's own peak RSS in KiB: its `VmHWM`, read every 5 ms until it is gone (the high-water
/// mark only grows, so the last reading is the peak to within the last 5 ms).
///
/// Not `wait4`'s `ru_maxrss`: Linux folds the RSS of the process that spawned the kit into it at
/// `exec` (the forked test process's pages), so a test binary that once held 130 MB made every
/// later kit look that big. `VmHWM` is the kit's own address space only.
fn watch_peak_rss(pid: i32) -> std::thread::JoinHandle<i64> {
    std::thread::spawn(move || {
        let status = format!("/proc/{pid}/status");
        let mut peak = 0;
        while let Ok(text) = std::fs::read_to_string(&status) {
            // A reaped pid's file is gone; a zombie's has no VmHWM line.
            let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
            else {
                break;
            };
            peak = peak.max(kb);
            std::thread::sleep(Duration::from_millis(5));
        }
        peak
    })
}

/// Runs the kit with `args`; `signal` = `Some((after, sig))` sends it `sig` after `after`.
pub fn kit(args: &[&str], signal: Option<(Duration, i32)>) -> Run {
    let dir = scratch("run");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mark = format!("DSH_HOSTILE_TEST={}", uuid::Uuid::new_v4().simple());
    let (k, v) = mark.split_once('=').unwrap();
    let out_path = dir.join("stdout");
    let err_path = dir.join("stderr");
    let started = Instant::now();
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let child = Command::new(KIT)
        .args(args)
        .current_dir(&dir)
        .env("TMPDIR", &tmp)
        .env(k, v)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("start the kit");
    let pid = child.id() as i32;
    let peak = watch_peak_rss(pid);
    if let Some((after, sig)) = signal {
        std::thread::sleep(after);
        // SAFETY: kill(2) on our own child; no memory is involved.
        unsafe {
            libc::kill(pid, sig);
        }
    }
    // wait4 rather than Child::wait: it also gives the child's resource usage (the `Child` is
    // reaped by it; dropping the handle afterwards neither waits nor kills).
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4: {}", std::io::Error::last_os_error());
    let wall = started.elapsed();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    // Killed processes take a moment to go; give them a second before calling them leftovers.
    let needle = format!("{mark}\0").into_bytes();
    let mut left_procs = marked(&needle);
    let until = Instant::now() + Duration::from_secs(2);
    while !left_procs.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        left_procs = marked(&needle);
    }
    for p in &left_procs {
        // SAFETY: kill(2) on a process of this test; no memory is involved.
        unsafe {
            libc::kill(*p, libc::SIGKILL);
        }
    }
    let left_dirs: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let _ = usage;
    let run = Run {
        code,
        wall,
        max_rss_kb: peak.join().unwrap_or(0),
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        left_dirs,
        left_procs,
    };
    eprintln!(
        "hostile: {:<60} exit {:>3}  {:>6.1} s  {:>6.1} MB  dirs {}  procs {}",
        args.join(" ").replace(env!("CARGO_MANIFEST_DIR"), "."),
        run.code,
        run.wall.as_secs_f64(),
        run.max_rss_kb as f64 / 1024.0,
        run.left_dirs.len(),
        run.left_procs.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
    run
}
