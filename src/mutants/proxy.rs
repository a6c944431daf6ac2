//! The stdio plumbing of a mutant: client ⇄ rewriter ⇄ runtime child process.

use super::chain::Chain;
use super::MutantKind;
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

static PENDING_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn remember_signal(sig: libc::c_int) {
    PENDING_SIGNAL.store(sig, Ordering::SeqCst);
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs mutant `name` (or several, comma-separated: see [`super::find_all`]) in front of `cmd`;
/// returns the process exit code (never returns for the mutants that refuse to exit, until killed).
pub fn run<S: AsRef<std::ffi::OsStr>>(name: &str, cmd: &[S]) -> i32 {
    let (layers, mut child) = match start(name, cmd) {
        Ok(started) => started,
        Err(code) => return code,
    };
    let pid = child.id() as libc::pid_t;
    relay_signals(pid);
    let proxy = Proxy {
        rw: Arc::new(Mutex::new(Chain::new(&layers))),
        out: Arc::new(Mutex::new(std::io::stdout())),
    };
    let startup = lock(&proxy.rw).startup();
    write_lines(&proxy.out, &startup);
    let input = Input {
        hold: lock(&proxy.rw).drops_at_eof(),
        proxy: proxy.clone(),
        child_in: child.stdin.take(),
        pid,
    };
    std::thread::spawn(move || input.run());
    proxy.relay_output(child.stdout.take().expect("piped stdout"));
    proxy.exit(child)
}

/// The mutants `name` names, and the runtime `cmd` started behind them; `Err`: the exit code
/// of a call that cannot start (said on stderr).
fn start<S: AsRef<std::ffi::OsStr>>(
    name: &str,
    cmd: &[S],
) -> Result<(Vec<MutantKind>, Child), i32> {
    let layers = match super::find_all(name) {
        Ok(ms) => ms.iter().map(|m| m.kind).collect::<Vec<_>>(),
        Err(e) => {
            eprintln!("dsh-conformance mutant: {e}; known: {}", names());
            return Err(2);
        }
    };
    let Some((prog, args)) = cmd.split_first() else {
        eprintln!("dsh-conformance mutant: no runtime command given (usage: mutant <name> -- <cmd> [args])");
        return Err(2);
    };
    let prog = prog.as_ref();
    match Command::new(prog)
        .args(args.iter().map(AsRef::as_ref))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => Ok((layers, c)),
        Err(e) => {
            eprintln!("dsh-conformance mutant: cannot start {prog:?}: {e}");
            Err(2)
        }
    }
}

/// Passes SIGTERM and SIGINT on to the runtime `pid`, so it decides the exit code as it would
/// unwrapped.
fn relay_signals(pid: libc::pid_t) {
    unsafe {
        libc::signal(
            libc::SIGTERM,
            remember_signal as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            remember_signal as *const () as libc::sighandler_t,
        );
    }
    std::thread::spawn(move || loop {
        let sig = PENDING_SIGNAL.swap(0, Ordering::SeqCst);
        if sig != 0 {
            unsafe { libc::kill(pid, sig) };
        }
        std::thread::sleep(Duration::from_millis(5));
    });
}

/// What both directions share: the mutants' rewriter and the client's stdout.
#[derive(Clone)]
struct Proxy {
    rw: Arc<Mutex<Chain>>,
    out: Arc<Mutex<std::io::Stdout>>,
}

impl Proxy {
    /// The runtime's stdout, rewritten line by line to the client's, until it closes.
    fn relay_output(&self, mut child_out: ChildStdout) {
        let fragmented = lock(&self.rw).fragments_output();
        let mut swap = lock(&self.rw).swaps_responses().then(Swap::default);
        let mut buf = vec![0u8; 64 * 1024];
        let mut partial: Vec<u8> = Vec::new();
        loop {
            if let Some(sw) = swap.as_mut() {
                use std::os::fd::AsRawFd;
                if sw.held.is_some() && !fd_readable_within(child_out.as_raw_fd(), SWAP_WAIT) {
                    // No second response came soon: the held one goes out alone, late.
                    sw.flush(&self.out);
                }
            }
            let n = match child_out.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            partial.extend_from_slice(&buf[..n]);
            let mut lines = Vec::new();
            complete_lines(&mut partial, |line| {
                let text = String::from_utf8_lossy(line);
                lines.extend(lock(&self.rw).output(&text));
            });
            if let Some(sw) = swap.as_mut() {
                for l in lines {
                    sw.line(&self.out, l);
                }
            } else if fragmented {
                for l in lines {
                    write_in_pieces(&self.out, &l);
                }
            } else {
                write_lines(&self.out, &lines);
            }
        }
        if let Some(sw) = swap.as_mut() {
            sw.flush(&self.out);
        }
    }

    /// The proxy's exit code once the runtime exits: the runtime's, unless the mutants say
    /// otherwise (one that never exits waits to be killed).
    fn exit(&self, mut child: Child) -> i32 {
        let code = match child.wait() {
            Ok(s) => s.code().unwrap_or_else(|| {
                use std::os::unix::process::ExitStatusExt;
                128 + s.signal().unwrap_or(0)
            }),
            Err(_) => 1,
        };
        let exit = lock(&self.rw).exit_code(code);
        match exit {
            Some(c) => c,
            None => loop {
                std::thread::sleep(Duration::from_secs(3600));
            },
        }
    }
}

/// The client's stdin, rewritten line by line to the runtime's (in a thread of its own).
struct Input {
    proxy: Proxy,
    child_in: Option<ChildStdin>,
    /// The runtime, killed with the proxy when a mutant crashes.
    pid: libc::pid_t,
    /// A mutant that drops the lines it holds at EOF: how long it waits for more input before
    /// it serves what it read.
    hold: Option<Duration>,
}

impl Input {
    fn run(mut self) {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 64 * 1024];
        let mut partial: Vec<u8> = Vec::new();
        // Lines read but not yet served (only a mutant that drops them at EOF holds any).
        let mut held: Vec<u8> = Vec::new();
        loop {
            if let Some(hold) = self.hold {
                if !held.is_empty() && !readable_within(hold) {
                    // Nothing more came within the hold: serve what was read.
                    forward(&mut self.child_in, &std::mem::take(&mut held));
                }
            }
            let n = match stdin.read(&mut buf) {
                Ok(0) | Err(_) => {
                    // Held lines die with the input: never served, never answered.
                    held.clear();
                    break;
                }
                Ok(n) => n,
            };
            forward(&mut self.child_in, &std::mem::take(&mut held));
            partial.extend_from_slice(&buf[..n]);
            let to_child = self.rewrite(&mut partial);
            if self.hold.is_some() {
                held = to_child;
            } else {
                forward(&mut self.child_in, &to_child);
            }
        }
        self.eof(&partial);
    }

    /// Rewrites the complete lines of `partial` (and takes them out of it): the answers the
    /// mutants make themselves go to the client; returns what goes to the runtime.
    fn rewrite(&mut self, partial: &mut Vec<u8>) -> Vec<u8> {
        let mut to_child = Vec::new();
        let mut to_client = Vec::new();
        complete_lines(partial, |line| {
            let act = lock(&self.proxy.rw).input(line);
            if let Some(why) = act.crash {
                self.crash(&to_child, &act.answer, &why);
            }
            for f in act.forward {
                to_child.extend_from_slice(&f);
                to_child.push(b'\n');
            }
            to_client.extend(act.answer);
        });
        if !to_client.is_empty() {
            write_lines(&self.proxy.out, &to_client);
        }
        to_child
    }

    /// A mutant crashes: what was read before this line is served; then the process dies,
    /// taking its runtime with it, as an uncaught exception would.
    fn crash(&mut self, to_child: &[u8], answer: &[String], why: &str) -> ! {
        forward(&mut self.child_in, to_child);
        write_lines(&self.proxy.out, answer);
        eprintln!("{why}");
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        std::process::exit(1);
    }

    /// The client's EOF: the rest of a last line (as the mutants pass it), then the runtime's
    /// stdin closes, unless a mutant keeps it open.
    fn eof(self, partial: &[u8]) {
        let (tail, keep_open) = {
            let r = lock(&self.proxy.rw);
            (r.tail(partial), r.ignores_eof())
        };
        let mut child_in = self.child_in;
        if let Some(ci) = child_in.as_mut() {
            let _ = ci.write_all(&tail);
            let _ = ci.flush();
        }
        // A runtime that drains its turns before it exits: the EOF waits for every idle.
        while lock(&self.proxy.rw).holds_eof_for_turns() {
            std::thread::sleep(Duration::from_millis(20));
        }
        if keep_open {
            // Hold the runtime's stdin open for ever: the client's EOF never reaches it.
            let _keep = child_in;
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
    }
}

/// Hands each complete line of `partial` (without its newline) to `each`, then takes them out.
fn complete_lines(partial: &mut Vec<u8>, mut each: impl FnMut(&[u8])) {
    let mut start = 0;
    while let Some(i) = memchr::memchr(b'\n', &partial[start..]) {
        each(&partial[start..start + i]);
        start += i + 1;
    }
    partial.drain(..start);
}

/// Writes `line` and its newline to the client in three writes, 3 ms apart: up to a cut inside
/// the first multi-byte character (or a third of the way in), the rest of the line, then the
/// newline alone. The output lock is held for the whole frame, so answers the proxy makes itself
/// land between frames, never inside one.
fn write_in_pieces(out: &Mutex<std::io::Stdout>, line: &str) {
    let mut o = lock(out);
    for (i, piece) in pieces(line).into_iter().enumerate() {
        if i > 0 {
            let _ = o.flush();
            std::thread::sleep(Duration::from_millis(3));
        }
        let _ = o.write_all(piece);
    }
    let _ = o.flush();
}

/// How long [`Swap`] holds a response for a second one to come.
const SWAP_WAIT: Duration = Duration::from_millis(20);

/// Output with adjacent responses swapped ([`super::MutantKind::SwappedResponses`]): a response is held until
/// the next frame; when that is a response too, it goes out first; anything else, or
/// [`SWAP_WAIT`] without a frame, sends the held response first. Notifications keep their place
/// relative to every response.
#[derive(Default)]
struct Swap {
    held: Option<String>,
}

impl Swap {
    fn line(&mut self, out: &Mutex<std::io::Stdout>, l: String) {
        let response = matches!(
            crate::wire::classify(&l),
            crate::wire::Classified::Response(_)
        );
        match (self.held.take(), response) {
            (None, true) => self.held = Some(l),
            (None, false) => write_lines(out, &[l]),
            (Some(h), true) => write_lines(out, &[l, h]),
            (Some(h), false) => write_lines(out, &[h, l]),
        }
    }

    fn flush(&mut self, out: &Mutex<std::io::Stdout>) {
        if let Some(h) = self.held.take() {
            write_lines(out, &[h]);
        }
    }
}

/// Writes `lines` to the client, each with its newline, under one lock, then flushes.
fn write_lines(out: &Mutex<std::io::Stdout>, lines: &[String]) {
    let mut o = lock(out);
    for l in lines {
        let _ = writeln!(o, "{l}");
    }
    let _ = o.flush();
}

/// The three writes of [`write_in_pieces`]: they join to `line` and a newline.
fn pieces(line: &str) -> [&[u8]; 3] {
    let b = line.as_bytes();
    let cut = b
        .iter()
        .position(|&c| c >= 0x80)
        .map_or(b.len() / 3, |i| i + 1);
    [&b[..cut], &b[cut..], b"\n"]
}

/// Writes `bytes` to the runtime's stdin; a runtime that stopped reading is let go.
fn forward(child_in: &mut Option<std::process::ChildStdin>, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    if let Some(ci) = child_in.as_mut() {
        if ci.write_all(bytes).and_then(|_| ci.flush()).is_err() {
            *child_in = None;
        }
    }
}

/// Whether the proxy's stdin has something to read (data or EOF) within `wait`.
fn readable_within(wait: Duration) -> bool {
    fd_readable_within(0, wait)
}

/// Whether file descriptor `fd` has something to read (data or EOF) within `wait`.
fn fd_readable_within(fd: libc::c_int, wait: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as i32;
    loop {
        let r = unsafe { libc::poll(&mut fd, 1, ms) };
        if r >= 0 {
            return r > 0;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true;
        }
    }
}

/// The known mutant names, comma-separated.
pub fn names() -> String {
    super::ALL
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn a_frame_is_cut_inside_its_first_character_and_before_its_newline() {
        let line = r#"{"text":"a€b"}"#;
        let p = pieces(line);
        assert_eq!(p.concat(), format!("{line}\n").as_bytes());
        // The first piece ends on the euro sign's lead byte: no piece but the last is a line.
        assert_eq!(p[0], b"{\"text\":\"a\xe2");
        assert!(std::str::from_utf8(p[0]).is_err());
        assert_eq!(p[2], b"\n");
        let ascii = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let p = pieces(ascii);
        assert_eq!(p.concat(), format!("{ascii}\n").as_bytes());
        assert_eq!(p[0].len(), ascii.len() / 3);
        assert!(p.iter().take(2).all(|x| !x.contains(&b'\n')));
    }
}
