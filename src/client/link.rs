//! The link between the kit and a peer process (`dsh-conformance client-peer`), sans-IO: each
//! message is a tag byte, a big-endian `u32` length and that many bytes. The peer relays its
//! stdin to the kit and writes what the kit sends on its stdout and stderr, so the kit sees and
//! times every byte the client exchanges with its "runtime".

/// One message on the link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// Peer → kit, first: the peer's launch as JSON (`argv`, `cwd`, `home`).
    Hello(Vec<u8>),
    /// Peer → kit: bytes the client wrote on the peer's stdin.
    Stdin(Vec<u8>),
    /// Peer → kit: the client closed the peer's stdin.
    StdinEof,
    /// Peer → kit: the peer caught this signal and exits (0 on SIGTERM, 130 on SIGINT).
    Signal(i32),
    /// Peer → kit: the last `Stdout`/`Stderr` message was written in full.
    Written,
    /// Kit → peer: write these bytes on stdout.
    Stdout(Vec<u8>),
    /// Kit → peer: write these bytes on stderr.
    Stderr(Vec<u8>),
    /// Kit → peer: exit with this code.
    Exit(i32),
    /// Kit → peer: close stdout and live on (the robustness suite).
    CloseStdout,
}

impl Msg {
    fn tag(&self) -> u8 {
        match self {
            Msg::Hello(_) => b'h',
            Msg::Stdin(_) => b'i',
            Msg::StdinEof => b'z',
            Msg::Signal(_) => b'g',
            Msg::Written => b'w',
            Msg::Stdout(_) => b'o',
            Msg::Stderr(_) => b'e',
            Msg::Exit(_) => b'x',
            Msg::CloseStdout => b'c',
        }
    }

    /// The message's bytes on the link.
    pub fn encode(&self) -> Vec<u8> {
        let body: Vec<u8> = match self {
            Msg::Hello(b) | Msg::Stdin(b) | Msg::Stdout(b) | Msg::Stderr(b) => b.clone(),
            Msg::Signal(n) | Msg::Exit(n) => n.to_be_bytes().to_vec(),
            Msg::StdinEof | Msg::Written | Msg::CloseStdout => Vec::new(),
        };
        let mut out = Vec::with_capacity(body.len() + 5);
        out.push(self.tag());
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
        out
    }
}

/// Reassembles messages from the link's bytes, whatever the reads' boundaries.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// Adds bytes read from the link.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, if one is buffered; `Err` for an unknown tag.
    pub fn next_msg(&mut self) -> Result<Option<Msg>, String> {
        if self.buf.len() < 5 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]) as usize;
        if self.buf.len() < 5 + len {
            return Ok(None);
        }
        let tag = self.buf[0];
        // Copied as a slice and drained as a range (a byte iterator is slow in debug builds,
        // and a long frame is tens of MiB).
        let body = self.buf[5..5 + len].to_vec();
        self.buf.drain(..5 + len);
        let int = || {
            <[u8; 4]>::try_from(body.as_slice())
                .map(i32::from_be_bytes)
                .map_err(|_| format!("link message {:?}: bad length {len}", tag as char))
        };
        Ok(Some(match tag {
            b'h' => Msg::Hello(body),
            b'i' => Msg::Stdin(body),
            b'z' => Msg::StdinEof,
            b'g' => Msg::Signal(int()?),
            b'w' => Msg::Written,
            b'o' => Msg::Stdout(body),
            b'e' => Msg::Stderr(body),
            b'x' => Msg::Exit(int()?),
            b'c' => Msg::CloseStdout,
            t => return Err(format!("unknown link message tag {t}")),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_survive_any_read_boundaries() {
        let msgs = vec![
            Msg::Hello(b"{}".to_vec()),
            Msg::Stdin(b"abc\n".to_vec()),
            Msg::StdinEof,
            Msg::Signal(15),
            Msg::Stderr(vec![0xff, 0xfe]),
            Msg::Exit(-1),
            Msg::Written,
            Msg::CloseStdout,
        ];
        let bytes: Vec<u8> = msgs.iter().flat_map(Msg::encode).collect();
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for b in bytes.chunks(3) {
            d.push(b);
            while let Some(m) = d.next_msg().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, msgs);
        d.push(&[b'?', 0, 0, 0, 0]);
        assert!(d.next_msg().is_err());
    }
}
