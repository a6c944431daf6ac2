//! The line readers of the mutants that read stdout's lines badly (`quadratic-lines`,
//! `pooled-reads`): each yields the lines a plain reader would, at the cost its bug has.

use std::collections::VecDeque;
use std::io::{BufRead, Read};

/// The `quadratic-lines` mutant's reader: every read copies the old buffer and the chunk into a
/// new one, then scans it from its start for a newline (string concatenation and `indexOf`), so a
/// line costs its length times its count of reads. The copy goes into a buffer kept between
/// reads: the cost is time, not allocations.
pub(super) fn quadratic_lines(mut r: impl Read) -> impl Iterator<Item = std::io::Result<Vec<u8>>> {
    let mut buf: Vec<u8> = Vec::new();
    let mut copy: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    std::iter::from_fn(move || loop {
        if let Some(at) = buf.iter().position(|&b| b == b'\n') {
            let line = buf[..at].to_vec();
            buf.drain(..=at);
            return Some(Ok(line));
        }
        match r.read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => {
                copy.clear();
                copy.extend_from_slice(&buf);
                copy.extend_from_slice(&chunk[..n]);
                std::mem::swap(&mut buf, &mut copy);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Some(Err(e)),
        }
    })
}

/// The `pooled-reads` mutant's lines: 16 times the line's length held while it is read. Its
/// copying and searching are std's (memcpy, memchr), so that only its memory is wrong, not its
/// speed, even unoptimised on a busy machine.
pub(super) fn pooled_lines(mut r: impl Read) -> impl Iterator<Item = std::io::Result<Vec<u8>>> {
    const POOL: usize = 64 << 10;
    const READ: usize = 4096;
    // The reads of the line in progress, each in its pool; the start of that line from the read
    // that ended the previous one; whole lines not yet handed out.
    let mut held: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut rest: Vec<u8> = Vec::new();
    let mut ready: VecDeque<Vec<u8>> = VecDeque::new();
    std::iter::from_fn(move || loop {
        if let Some(line) = ready.pop_front() {
            return Some(Ok(line));
        }
        // A pool written in full (as a pool reused for many reads is), so it is resident.
        let mut pool = vec![b' '; POOL];
        let n = match r.read(&mut pool[..READ]) {
            Ok(0) => return None,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Some(Err(e)),
        };
        let Some(last) = pool[..n].iter().rposition(|&b| b == b'\n') else {
            held.push((pool, n));
            continue;
        };
        let mut buf = std::mem::take(&mut rest);
        for (p, k) in held.drain(..) {
            buf.extend_from_slice(&p[..k]);
        }
        buf.extend_from_slice(&pool[..=last]);
        rest.extend_from_slice(&pool[last + 1..n]);
        ready.extend(std::io::Cursor::new(buf).split(b'\n').map_while(Result::ok));
    })
}
