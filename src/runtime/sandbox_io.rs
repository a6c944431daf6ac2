//! The host's sandbox backend ([`Host`]): `bwrap` found on `PATH`, probed once at the first call
//! as the release probes it (its `read-only` profile around `true`, 5 s at most, exit 0: usable),
//! then each command run as `bwrap <workspace-write profile> -- bash -c COMMAND` in the session's
//! directory ([`super::sandbox`] holds the policy and the wording).

use super::sandbox::{self, Backend, Confined, Ran, Request, Running};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

/// The release's bash deadline (`timeoutMs` 120000); the reference then kills the command.
pub(super) const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The output the release keeps of each stream (`maxOutputBytes` 64000, its tail).
pub(super) const MAX_OUTPUT: usize = 64_000;

/// The release's probe bound (`probeTimeoutMs` 5000).
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// `bwrap` on `PATH`, probed at the first call (the verdict is kept for the process's life).
#[derive(Debug, Default)]
pub struct Host {
    usable: OnceLock<bool>,
}

impl Backend for Host {
    fn run(&self, req: &Request<'_>) -> Confined {
        if !*self.usable.get_or_init(probe) {
            return Confined::Unavailable;
        }
        run_bwrap(req)
    }

    fn start(&self, req: &Request<'_>) -> Result<Box<dyn Running>, Confined> {
        if !*self.usable.get_or_init(probe) {
            return Err(Confined::Unavailable);
        }
        super::sandbox_job::start(req).map(|j| Box::new(j) as Box<dyn Running>)
    }
}

/// Whether `bwrap` on `PATH` can create the release's probe profile.
pub fn probe() -> bool {
    let child = Command::new("bwrap")
        .args(sandbox::probe_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let deadline = Instant::now() + PROBE_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Starts `bwrap <workspace-write profile> -- bash -c COMMAND` in the request's directory, its
/// stdout and stderr piped (a call run to its end and a background job start the same way).
pub(super) fn spawn_bwrap(req: &Request<'_>) -> std::io::Result<std::process::Child> {
    let workspace = req.workspace.to_string_lossy();
    Command::new("bwrap")
        .args(sandbox::bwrap_args(&workspace))
        .args(["--", "bash", "-c", req.command])
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .current_dir(req.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// Runs one request under bwrap to its end (killed after [`RUN_TIMEOUT`]), stdout and stderr
/// read apart, each kept to its last [`MAX_OUTPUT`] bytes.
fn run_bwrap(req: &Request<'_>) -> Confined {
    let child = spawn_bwrap(req);
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Confined::Failed(format!("spawn bwrap: {e}")),
    };
    let (done, watch) = watchdog(child.id());
    let err_pipe = child.stderr.take();
    let stderr = std::thread::spawn(move || err_pipe.map(tail).unwrap_or_default());
    let out = child.stdout.take().map(tail).unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let status = child.wait();
    drop(done);
    let _ = watch.join();
    let status = match status {
        Ok(s) => s,
        Err(e) => return Confined::Failed(format!("wait for bwrap: {e}")),
    };
    Confined::Ran(Ran {
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        exit_code: status.code(),
        signal: status.signal().map(signal_name),
    })
}

/// A thread that kills process `pid` unless the returned sender is dropped within
/// [`RUN_TIMEOUT`].
fn watchdog(pid: u32) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel::<()>();
    let watch = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(RUN_TIMEOUT) {
            // SAFETY: kill(2) has no memory effects. The sender is dropped only after the
            // child is reaped, so until then `pid` is still the child's.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    });
    (tx, watch)
}

/// Everything `r` yields, but only its last [`MAX_OUTPUT`] bytes are kept.
fn tail(mut r: impl Read) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => {
                let cut = kept.len().saturating_sub(MAX_OUTPUT);
                kept.drain(..cut);
                return kept;
            }
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * MAX_OUTPUT {
                    kept.drain(..kept.len() - MAX_OUTPUT);
                }
            }
        }
    }
}

/// Node's name of a signal number (`SIGKILL`), or the number.
pub(super) fn signal_name(n: i32) -> String {
    let name = match n {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return n.to_string(),
    };
    name.to_string()
}
