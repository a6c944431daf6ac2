//! The peer process (`dsh-conformance client-peer --port N -- ARGS…`): what the client under test
//! launches as its runtime. It connects back to the kit on 127.0.0.1, says how it was launched,
//! relays its stdin to the kit, and writes on its stdout and stderr exactly what the kit sends,
//! blocking as a real runtime would when the client does not read (or closing stdout and living
//! on, when the kit says). It exits when the kit says,
//! on SIGTERM (0) or SIGINT (130), and with 1 when the kit is gone.

use super::link::{Decoder, Msg};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

type Link = Arc<Mutex<TcpStream>>;

fn send(link: &Link, m: &Msg) {
    let mut s = link.lock().unwrap_or_else(|e| e.into_inner());
    let _ = s.write_all(&m.encode());
}

/// Runs the peer; returns its exit code.
pub fn relay(port: u16, args: &[String]) -> i32 {
    let stream = match TcpStream::connect(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("dsh-conformance client-peer: cannot reach the kit on port {port}: {e}");
            return 1;
        }
    };
    let _ = stream.set_nodelay(true);
    let mut reader = match stream.try_clone() {
        Ok(r) => r,
        Err(_) => return 1,
    };
    let link: Link = Arc::new(Mutex::new(stream));
    let hello = serde_json::json!({
        "argv": args,
        "cwd": std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default(),
        "home": std::env::var("DSH_HOME").ok(),
    });
    send(&link, &Msg::Hello(hello.to_string().into_bytes()));
    watch_signals(link.clone());
    forward_stdin(link.clone());
    let mut dec = Decoder::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        loop {
            match dec.next_msg() {
                Ok(Some(m)) => {
                    if let Some(code) = obey(&link, m) {
                        return code;
                    }
                }
                Ok(None) => break,
                Err(_) => return 1,
            }
        }
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return 1,
            Ok(n) => dec.push(&buf[..n]),
        }
    }
}

/// Carries out one message from the kit; `Some(code)` to exit.
fn obey(link: &Link, m: Msg) -> Option<i32> {
    let written = match m {
        Msg::Stdout(b) => {
            if holds_a_long_line(&b) {
                deliver_in_pages();
            }
            let mut o = std::io::stdout().lock();
            o.write_all(&b).and_then(|_| o.flush())
        }
        Msg::Stderr(b) => {
            let mut e = std::io::stderr().lock();
            e.write_all(&b).and_then(|_| e.flush())
        }
        Msg::Exit(code) => return Some(code),
        Msg::CloseStdout => {
            let _ = std::io::stdout().lock().flush();
            // SAFETY: closes our own fd 1; nothing writes stdout after this message.
            unsafe { libc::close(1) };
            return None;
        }
        _ => return None,
    };
    match written {
        Ok(()) => {
            send(link, &Msg::Written);
            None
        }
        // The client closed our stdout or stderr: a runtime would die of it.
        Err(_) => Some(1),
    }
}

/// A write with a stretch longer than this between newlines reaches the client a page at a time
/// (see [`deliver_in_pages`]).
const LONG: usize = 1 << 20;

/// Whether `b` has more than [`LONG`] bytes without a newline: part of a long line. Many short
/// lines are delivered as they come (a page at a time, they would be slow to read on a loaded
/// machine for no gain).
fn holds_a_long_line(b: &[u8]) -> bool {
    let mut last = 0;
    for at in memchr::memchr_iter(b'\n', b).chain([b.len()]) {
        if at - last > LONG {
            return true;
        }
        last = at + 1;
    }
    false
}

/// Shrinks the buffer between our stdout and the client to about a page (`F_SETPIPE_SZ` on a
/// pipe, as Python's subprocess makes; `SO_SNDBUF` on a socket, as Node's libuv makes), so a long
/// frame arrives in reads of a few KiB, as it does from a runtime writing to a client that reads
/// as fast as it can. The contract allows any split; this one makes the count of reads that a
/// long line takes a fixed property of the scenario rather than of the machine's speed: a
/// client whose line reading is quadratic in the count of reads is then minutes away from its
/// text on any machine, and one reading in linear time is not slowed by it. Once per peer; a
/// stdout that is a file or a terminal is left as it is.
fn deliver_in_pages() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let page: libc::c_int = 4096;
        // SAFETY: fcntl and setsockopt on our own fd 1 with a valid int; a failure (fd 1 is
        // neither a pipe nor a socket) leaves the buffer as it is, which is only slower to judge.
        unsafe {
            if libc::fcntl(1, libc::F_SETPIPE_SZ, page) < 0 {
                libc::setsockopt(
                    1,
                    libc::SOL_SOCKET,
                    libc::SO_SNDBUF,
                    (&page as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
        }
    });
}

fn forward_stdin(link: Link) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => send(&link, &Msg::Stdin(buf[..n].to_vec())),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        send(&link, &Msg::StdinEof);
    });
}

fn watch_signals(link: Link) {
    if crate::sys::catch(&[libc::SIGTERM, libc::SIGINT], crate::sys::record, false).is_err() {
        return;
    }
    std::thread::spawn(move || loop {
        if let Some(sig) = crate::sys::take_caught() {
            send(&link, &Msg::Signal(sig));
            std::process::exit(if sig == libc::SIGINT { 130 } else { 0 });
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_stretch_longer_than_a_mib_between_newlines_is_a_long_line() {
        let line = |n: usize| {
            let mut v = vec![b'x'; n];
            v.push(b'\n');
            v
        };
        let short: Vec<u8> = (0..100).flat_map(|_| line(64 << 10)).collect();
        assert!(short.len() > 4 * LONG && !holds_a_long_line(&short));
        let mut mid = line(10);
        mid.extend(line(LONG + 1));
        mid.extend(line(10));
        assert!(holds_a_long_line(&mid));
        assert!(holds_a_long_line(&vec![b'x'; LONG + 1]));
        assert!(!holds_a_long_line(&line(LONG)));
    }
}
