//! Fuzz target `line_stream`: one byte stream fed to the splitter whole and cut into arbitrary
//! chunks must give the same lines, the same over-long reports and the same dropped tail, and both
//! must match the whole-stream model in [`super::oracle`] (split UTF-8, CR/LF mixes, unterminated
//! tails and small line bounds come from the input).
//!
//! Input layout, chosen so that mutating the stream never shifts the header:
//! `[bound] [n] [len_1 … len_n] stream…` — `bound` < 0x80 is the line bound in bytes (0–127), else
//! the default bound; `n % 8` chunk lengths follow, one byte each; the rest of the stream is one
//! last chunk.

use super::oracle::{self, LineModel, LineRef};
use crate::wire::lines::DEFAULT_MAX_LINE;
use crate::wire::{LineDecoder, LineEvent};

/// Runs the check; panics with a description on failure (the fuzz entry point).
pub fn run(data: &[u8]) {
    if let Err(e) = check(data) {
        panic!("line_stream: {e}");
    }
}

/// A decoded input: the line bound, the chunk lengths and the stream.
#[derive(Debug)]
pub struct Input<'a> {
    /// Line bound for the decoder.
    pub max_line: usize,
    /// The stream, cut into these chunks in order (they cover it exactly).
    pub chunks: Vec<&'a [u8]>,
    /// The whole stream.
    pub stream: &'a [u8],
}

/// Decodes the input layout described in the module docs.
pub fn decode(data: &[u8]) -> Input<'_> {
    let (&bound, rest) = data.split_first().unwrap_or((&0xff, &[]));
    let max_line = if bound < 0x80 {
        bound as usize
    } else {
        DEFAULT_MAX_LINE
    };
    let (&n, rest) = rest.split_first().unwrap_or((&0, &[]));
    let n = (n % 8) as usize;
    let (lens, mut stream_rest) = rest.split_at(n.min(rest.len()));
    let stream = stream_rest;
    let mut chunks = Vec::with_capacity(n + 1);
    for &len in lens {
        let (c, r) = stream_rest.split_at((len as usize).min(stream_rest.len()));
        chunks.push(c);
        stream_rest = r;
    }
    chunks.push(stream_rest);
    Input {
        max_line,
        chunks,
        stream,
    }
}

/// Encodes an input for [`decode`] (seed corpora and property tests).
pub fn encode(max_line: Option<u8>, chunk_lens: &[u8], stream: &[u8]) -> Vec<u8> {
    let mut out = vec![
        max_line.map_or(0xff, |b| b & 0x7f),
        chunk_lens.len().min(7) as u8,
    ];
    out.extend_from_slice(&chunk_lens[..chunk_lens.len().min(7)]);
    out.extend_from_slice(stream);
    out
}

/// The events of one run, recorded without an allocation per line: the lines' text in one buffer.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    text: String,
    /// Per event: the end of a line in `text`, or an over-long line's length.
    events: Vec<Result<usize, usize>>,
    /// The dropped tail, `(bytes, blank)`.
    pub tail: Option<(usize, bool)>,
}

impl Recorded {
    /// Empties the record, keeping its buffers.
    pub fn clear(&mut self) {
        self.text.clear();
        self.events.clear();
        self.tail = None;
    }

    /// Records one event of the splitter.
    pub fn push(&mut self, e: LineEvent<'_>) {
        self.events.push(match e {
            LineEvent::Line(l) => {
                self.text.push_str(l);
                Ok(self.text.len())
            }
            LineEvent::TooLong(n) => Err(n),
        });
    }

    /// The events, in order.
    pub fn iter(&self) -> impl Iterator<Item = LineRef<'_>> + '_ {
        let mut start = 0;
        self.events.iter().map(move |e| match *e {
            Ok(end) => {
                let l = &self.text[start..end];
                start = end;
                LineRef::Line(l)
            }
            Err(n) => LineRef::TooLong(n),
        })
    }

    /// The events as owned model events (for messages).
    pub fn to_models(&self) -> Vec<LineModel> {
        self.iter().map(LineRef::to_model).collect()
    }

    /// Whether the model splits `stream` into exactly these events and tail; compared as the
    /// model finds them, with no owned copy of its lines.
    pub fn agrees_with_model(&self, stream: &[u8], max_line: usize) -> bool {
        let mut mine = self.iter();
        let mut same = true;
        let tail = oracle::each_line(stream, max_line, &mut |l| {
            same &= mine.next() == Some(l);
        });
        same && mine.next().is_none() && tail == self.tail
    }
}

/// Feeds `chunks` to a fresh decoder into `got`; checks `pending()` after every chunk against the
/// bytes of the incomplete line so far.
fn feed(max_line: usize, chunks: &[&[u8]], got: &mut Recorded) -> Result<(), String> {
    got.clear();
    got.text.reserve(chunks.iter().map(|c| c.len()).sum());
    let mut d = LineDecoder::new(max_line);
    let mut since_nl = 0usize;
    for c in chunks {
        d.push(c, &mut |e| got.push(e));
        since_nl = match memchr::memrchr(b'\n', c) {
            Some(i) => c.len() - i - 1,
            None => since_nl + c.len(),
        };
        if d.pending() != since_nl {
            return Err(format!(
                "pending() is {} after a chunk, but {since_nl} bytes of an unfinished line were fed",
                d.pending()
            ));
        }
    }
    got.tail = d.finish().map(|t| (t.len, t.blank));
    if d.pending() != 0 {
        return Err(format!("pending() is {} after finish()", d.pending()));
    }
    Ok(())
}

thread_local! {
    /// The two runs' records, kept between inputs: their buffers are allocated once, not per
    /// execution (a record is cleared before every run).
    static SCRATCH: std::cell::RefCell<(Recorded, Recorded)> = Default::default();
}

/// Runs the check on one input.
pub fn check(data: &[u8]) -> Result<(), String> {
    SCRATCH.with_borrow_mut(|(whole, chunked)| check_with(data, whole, chunked))
}

fn check_with(data: &[u8], whole: &mut Recorded, chunked: &mut Recorded) -> Result<(), String> {
    let input = decode(data);
    feed(input.max_line, &[input.stream], whole)?;
    // One chunk is the whole stream again: feeding it twice would compare a run with itself.
    if input.chunks.len() > 1 {
        feed(input.max_line, &input.chunks, chunked)?;
        if *chunked != *whole {
            return Err(format!(
                "chunking changed the lines (bound {}, chunks {:?}):\n  whole   {:?} tail {:?}\n  chunked {:?} tail {:?}",
                input.max_line,
                input.chunks.iter().map(|c| c.len()).collect::<Vec<_>>(),
                whole.to_models(),
                whole.tail,
                chunked.to_models(),
                chunked.tail,
            ));
        }
    }
    if !whole.agrees_with_model(input.stream, input.max_line) {
        let model = oracle::split_lines(input.stream, input.max_line);
        return Err(format!(
            "lines differ from the model (bound {}):\n  wire  {:?} tail {:?}\n  model {model:?}",
            input.max_line,
            whole.to_models(),
            whole.tail,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_round_trips_and_chunks_cover_the_stream() {
        let data = encode(Some(5), &[1, 0, 200], b"ab\ncd\n");
        let i = decode(&data);
        assert_eq!(i.max_line, 5);
        assert_eq!(i.stream, b"ab\ncd\n");
        assert_eq!(i.chunks.concat(), b"ab\ncd\n");
        assert_eq!(i.chunks.len(), 4);
        assert_eq!(decode(&[]).max_line, DEFAULT_MAX_LINE);
    }

    #[test]
    fn split_characters_crlf_and_small_bounds_agree_with_the_model() {
        for (bound, cuts, stream) in [
            (None, &[1u8, 1][..], "€\r\n{\"a\":1}\r\r\n".as_bytes()),
            (Some(3), &[2, 2, 2][..], b"abcd\nab\n  \n\xe2\x82"),
            (Some(0), &[0][..], b"\n\nx\n"),
            (Some(4), &[3][..], b"      \n      "),
        ] {
            check(&encode(bound, cuts, stream)).unwrap();
        }
    }
}
