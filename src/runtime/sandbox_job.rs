//! A confined command started without waiting for it ([`Job`]): the foreground call's job that
//! a `timeoutMs` may promote, and `run_in_background`'s job (docs/CONTRACT.md#s13.6). Its
//! stdout and stderr are read by threads into buffers the job tools read from; dropping the job
//! kills what still runs.

use super::sandbox::{Confined, Ran, Request, Running};
use super::sandbox_io::{signal_name, spawn_bwrap, MAX_OUTPUT};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a SIGTERM'd job may take to end before it is killed.
const TERM_GRACE: Duration = Duration::from_secs(5);

/// A bwrap process and what it wrote so far.
pub struct Job {
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
    ended: Option<Ran>,
}

/// Starts `bwrap <workspace-write profile> -- bash -c COMMAND` in the request's directory.
pub fn start(req: &Request<'_>) -> Result<Job, Confined> {
    let mut child = spawn_bwrap(req).map_err(|e| match e.raw_os_error() {
        Some(n) => Confined::NotSpawned(errno_name(n)),
        None => Confined::Failed(format!("spawn bwrap: {e}")),
    })?;
    let (out, err) = (Arc::default(), Arc::default());
    let mut readers = Vec::new();
    if let Some(p) = child.stdout.take() {
        readers.push(reader(p, Arc::clone(&out)));
    }
    if let Some(p) = child.stderr.take() {
        readers.push(reader(p, Arc::clone(&err)));
    }
    Ok(Job {
        child,
        out,
        err,
        readers,
        ended: None,
    })
}

/// Node's name of a spawn errno (`ENOENT`), or `E` and its number.
fn errno_name(n: i32) -> String {
    match n {
        libc::ENOENT => "ENOENT".into(),
        libc::ENOTDIR => "ENOTDIR".into(),
        libc::EACCES => "EACCES".into(),
        _ => format!("E{n}"),
    }
}

/// A thread appending what `r` yields to `buf`, keeping its last 2 × [`MAX_OUTPUT`] bytes.
fn reader(mut r: impl Read + Send + 'static, buf: Arc<Mutex<Vec<u8>>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                return;
            }
            let mut b = buf.lock().unwrap_or_else(|e| e.into_inner());
            b.extend_from_slice(&chunk[..n]);
            if b.len() > 2 * MAX_OUTPUT {
                let cut = b.len() - MAX_OUTPUT;
                b.drain(..cut);
            }
        }
    })
}

fn snapshot(buf: &Mutex<Vec<u8>>) -> Vec<u8> {
    buf.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn tail_text(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[b.len().saturating_sub(MAX_OUTPUT)..]).into_owned()
}

impl Job {
    /// Reaps the ended child: its output read to the end, and how it ended.
    fn reap(&mut self, status: std::process::ExitStatus) -> Ran {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let ran = Ran {
            stdout: tail_text(&snapshot(&self.out)),
            stderr: tail_text(&snapshot(&self.err)),
            exit_code: status.code(),
            signal: status.signal().map(signal_name),
        };
        self.ended = Some(ran.clone());
        ran
    }
}

impl Running for Job {
    fn output(&self) -> (Vec<u8>, Vec<u8>) {
        (snapshot(&self.out), snapshot(&self.err))
    }

    fn wait(&mut self, d: Duration) -> Option<Ran> {
        if let Some(r) = &self.ended {
            return Some(r.clone());
        }
        let deadline = Instant::now().checked_add(d);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(self.reap(status)),
                Ok(None) if deadline.is_none_or(|t| Instant::now() < t) => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(None) => return None,
                Err(_) => {
                    let _ = self.child.kill();
                    let status = self.child.wait().ok()?;
                    return Some(self.reap(status));
                }
            }
        }
    }

    fn terminate(&mut self) -> Ran {
        if self.ended.is_none() {
            // SAFETY: kill(2) has no memory effects; the child is not reaped yet, so its pid
            // is still its own.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
            }
        }
        if let Some(r) = self.wait(TERM_GRACE) {
            return r;
        }
        let _ = self.child.kill();
        self.wait(Duration::MAX).unwrap_or_default()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if self.ended.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
