//! The kit's side of each peer: accepts the peer processes' connections on 127.0.0.1, numbers
//! them, and serves each with the reference runtime ([`crate::runtime::Runtime`], sans-IO)
//! behind the scenario's [`Stack`] of layers, logging every byte ([`super::log`]).

use super::layers::{Action, Stack};
use super::link::{Decoder, Msg};
use super::log::{note, PeerEvent, PeerLog, Peers};
use crate::runtime::launch::{self, Boot};
use crate::runtime::Runtime;
use crate::wire::{LineDecoder, LineEvent};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Makes a fresh stack of layers for each peer.
pub type Layers = fn() -> Stack;

/// Accepts peers on `listener` until the process ends (the thread is detached).
pub fn serve(listener: TcpListener, peers: Peers, layers: Layers, start: Instant) {
    std::thread::spawn(move || {
        for (i, conn) in listener.incoming().enumerate() {
            let Ok(conn) = conn else { return };
            let peers = peers.clone();
            std::thread::spawn(move || run_peer(conn, i + 1, peers, layers(), start));
        }
    });
}

enum In {
    Line(String),
    Eof,
    Signal,
    Gone,
}

fn run_peer(conn: TcpStream, n: usize, peers: Peers, mut stack: Stack, start: Instant) {
    let _ = conn.set_nodelay(true);
    let Ok(mut reader) = conn.try_clone() else {
        return;
    };
    let mut dec = Decoder::default();
    let Some(hello) = read_hello(&mut reader, &mut dec) else {
        return;
    };
    let argv: Vec<String> = hello["argv"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    peers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(PeerLog {
            n,
            argv: argv.clone(),
            events: Vec::new(),
        });
    let (tx, rx) = mpsc::channel();
    read_link(reader, dec, tx, peers.clone(), n, start);
    let mut out = Out {
        conn,
        peers,
        n,
        start,
        t0: Instant::now(),
    };
    let Some(mut rt) = boot(&argv, &hello, &mut out) else {
        return;
    };
    let acts = stack.boot();
    if out.act(acts).is_some() {
        return;
    }
    serve_runtime(&mut rt, &mut stack, rx, &mut out);
}

fn read_hello(r: &mut TcpStream, dec: &mut Decoder) -> Option<serde_json::Value> {
    let mut buf = [0u8; 4096];
    loop {
        if let Ok(Some(Msg::Hello(b))) = dec.next_msg() {
            return serde_json::from_slice(&b).ok();
        }
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(k) => dec.push(&buf[..k]),
        }
    }
}

/// Reads the link on a thread: stdin lines (logged as they arrive), EOF, signals, the end.
fn read_link(
    mut r: TcpStream,
    mut dec: Decoder,
    tx: mpsc::Sender<In>,
    peers: Peers,
    n: usize,
    start: Instant,
) {
    std::thread::spawn(move || {
        let mut lines = LineDecoder::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            while let Ok(Some(m)) = dec.next_msg() {
                let at = start.elapsed();
                match m {
                    Msg::Stdin(b) => lines.push(&b, &mut |ev| {
                        if let LineEvent::Line(l) = ev {
                            note(&peers, n, at, PeerEvent::Received(l.to_owned()));
                            let _ = tx.send(In::Line(l.to_owned()));
                        }
                    }),
                    Msg::StdinEof => {
                        note(&peers, n, at, PeerEvent::StdinEof);
                        let _ = tx.send(In::Eof);
                    }
                    Msg::Signal(s) => {
                        note(&peers, n, at, PeerEvent::Signal(s));
                        let _ = tx.send(In::Signal);
                        return;
                    }
                    Msg::Written => note(&peers, n, at, PeerEvent::Written),
                    _ => {}
                }
            }
            match r.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(In::Gone);
                    return;
                }
                Ok(k) => dec.push(&buf[..k]),
            }
        }
    });
}

/// The peer's output: frames coalesced per batch and cut into three writes a moment apart
/// (split and coalesced writes, §2.1), stderr, exit; each logged.
struct Out {
    conn: TcpStream,
    peers: Peers,
    n: usize,
    start: Instant,
    t0: Instant,
}

impl Out {
    fn now(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }

    fn send(&mut self, m: Msg) -> bool {
        self.conn.write_all(&m.encode()).is_ok()
    }

    /// Carries out `acts`; `Some(())` once the peer is done (exited or unreachable).
    fn act(&mut self, acts: Vec<Action>) -> Option<()> {
        let mut batch: Vec<u8> = Vec::new();
        for a in acts {
            match a {
                Action::Frame(f) => {
                    note(
                        &self.peers,
                        self.n,
                        self.start.elapsed(),
                        PeerEvent::Wrote(f.clone()),
                    );
                    batch.extend_from_slice(f.as_bytes());
                    batch.push(b'\n');
                }
                Action::Stderr(b) => {
                    if self.flush(&mut batch) {
                        return Some(());
                    }
                    note(
                        &self.peers,
                        self.n,
                        self.start.elapsed(),
                        PeerEvent::Stderr(b.len()),
                    );
                    if !self.send(Msg::Stderr(b)) {
                        return Some(());
                    }
                }
                Action::CloseStdout => {
                    if self.flush(&mut batch) {
                        return Some(());
                    }
                    note(
                        &self.peers,
                        self.n,
                        self.start.elapsed(),
                        PeerEvent::StdoutClosed,
                    );
                    if !self.send(Msg::CloseStdout) {
                        return Some(());
                    }
                }
                Action::Exit(code) => {
                    if self.flush(&mut batch) {
                        return Some(());
                    }
                    note(
                        &self.peers,
                        self.n,
                        self.start.elapsed(),
                        PeerEvent::Exit(code),
                    );
                    self.send(Msg::Exit(code));
                    return Some(());
                }
            }
        }
        self.flush(&mut batch).then_some(())
    }

    /// Writes the batch in three cuts; `true` when the peer is unreachable.
    fn flush(&mut self, batch: &mut Vec<u8>) -> bool {
        if batch.is_empty() {
            return false;
        }
        let cuts = [0, batch.len() / 3, batch.len() * 2 / 3, batch.len()];
        for w in cuts.windows(2).filter(|w| w[0] < w[1]) {
            note(&self.peers, self.n, self.start.elapsed(), PeerEvent::Chunk);
            if !self.send(Msg::Stdout(batch[w[0]..w[1]].to_vec())) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        batch.clear();
        false
    }
}

/// Answers `--version`, `--help`, a bad launch or a failing profile as the release does;
/// `Some` runtime when it serves.
fn boot(argv: &[String], hello: &serde_json::Value, out: &mut Out) -> Option<Runtime> {
    let exit = |out: &mut Out, stdout: String, stderr: String, code: i32| {
        let mut acts = Vec::new();
        if !stdout.is_empty() {
            acts.push(Action::Frame(stdout.trim_end_matches('\n').to_owned()));
        }
        if !stderr.is_empty() {
            acts.push(Action::Stderr(stderr.into_bytes()));
        }
        acts.push(Action::Exit(code));
        out.act(acts);
        None
    };
    let args = match launch::parse_args(argv) {
        Ok(Some(a)) if a.version => {
            return exit(out, launch::RELEASE_VERSION.into(), String::new(), 0)
        }
        Ok(Some(a)) => a,
        Ok(None) => return exit(out, crate::runtime::USAGE.into(), String::new(), 0),
        Err(e) => return exit(out, String::new(), format!("dsh: {e}\n"), 2),
    };
    let home = hello["home"].as_str().map(String::from);
    let cwd = std::path::PathBuf::from(hello["cwd"].as_str().unwrap_or("/"));
    let lookup = move |k: &str| if k == "DSH_HOME" { home.clone() } else { None };
    match launch::launch(&args, &lookup, &cwd) {
        Err(f) => exit(out, String::new(), f.stderr, f.code),
        Ok(l) => {
            if !l.stderr.is_empty() {
                out.act(vec![Action::Stderr(l.stderr.into_bytes())]);
            }
            match l.boot {
                Boot::Serve => Some(Runtime::new(l.cfg)),
                Boot::Exit(code) => exit(out, String::new(), String::new(), code),
                // Serves nothing; a signal ends it (the relay exits on its own).
                Boot::Hold => None,
            }
        }
    }
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The runtime's loop: lines in, model work on time, output through the layers.
fn serve_runtime(rt: &mut Runtime, stack: &mut Stack, rx: mpsc::Receiver<In>, out: &mut Out) {
    let mut bytes = Vec::new();
    loop {
        let wait = next_wait(rt, stack, out.now());
        let msg = match wait {
            Some(d) => rx.recv_timeout(d).ok(),
            None => rx.recv().ok().or(Some(In::Gone)),
        };
        match msg {
            Some(In::Line(l)) => {
                let kept = serde_json::from_str::<serde_json::Value>(&l).is_ok_and(|v| {
                    stack.input(&v, out.now());
                    stack.intercept(&v, out.now())
                });
                if !kept {
                    rt.handle_line(&l, epoch_ms(), &mut bytes);
                }
            }
            Some(In::Eof) => {
                std::thread::sleep(Duration::from_millis(stack.exit_delay_ms()));
                let code = rt.on_eof(epoch_ms(), &mut bytes);
                let mut acts = through(stack, &mut bytes, out.now());
                acts.push(Action::Exit(code));
                out.act(acts);
                return;
            }
            Some(In::Signal) | Some(In::Gone) => {
                if matches!(msg, Some(In::Gone)) {
                    note(&out.peers, out.n, out.start.elapsed(), PeerEvent::Gone);
                }
                return;
            }
            None => {}
        }
        rt.poll(epoch_ms(), &mut bytes);
        let mut acts = through(stack, &mut bytes, out.now());
        acts.extend(stack.tick(out.now()));
        if let Some(code) = rt.exit_code() {
            acts.push(Action::Exit(code));
        }
        if out.act(acts).is_some() {
            return;
        }
    }
}

fn next_wait(rt: &Runtime, stack: &Stack, now: u64) -> Option<Duration> {
    let layer = stack.deadline().map(|d| d.saturating_sub(now));
    let model = rt.next_deadline().map(|d| d.saturating_sub(epoch_ms()));
    match (layer, model) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
    .map(Duration::from_millis)
}

/// The runtime's complete output lines, through the layers.
fn through(stack: &mut Stack, bytes: &mut Vec<u8>, now: u64) -> Vec<Action> {
    let mut acts = Vec::new();
    let text = String::from_utf8_lossy(bytes).into_owned();
    bytes.clear();
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        acts.extend(stack.output(line.to_owned(), now));
    }
    acts
}
