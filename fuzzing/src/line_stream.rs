//! Fuzz target `line_stream`: one byte stream, cut into arbitrary chunks and fed to the splitter,
//! must give the lines, over-long reports and dropped tail of the whole-stream model in
//! [`super::oracle`], and `pending()` must count the bytes of the unfinished line after every chunk
//! (split UTF-8, CR/LF mixes, unterminated tails and small line bounds come from the input). Since
//! every cut must give the model's lines, no two cuts of a stream can differ: chunking never changes
//! the lines.
//!
//! Input layout, chosen so that mutating the stream never shifts the header:
//! `[bound] [n] [len_1 … len_n] stream…` — `bound` < 0x80 is the line bound in bytes (0–127), else
//! the default bound; `n % 8` chunk lengths follow, one byte each; the rest of the stream is one
//! last chunk.

use super::oracle::{self, LineRecord};
use dsh_conformance::wire::lines::DEFAULT_MAX_LINE;
use dsh_conformance::wire::{LineDecoder, LineEvent};

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

/// The events of one run: the oracle's [`LineRecord`] (uninstrumented in fuzz builds, like the
/// model it is compared with).
pub type Recorded = LineRecord;

/// Records one event of the splitter into `got`.
pub fn record(got: &mut Recorded, e: LineEvent<'_>) {
    match e {
        LineEvent::Line(l) => got.line(l),
        LineEvent::TooLong(n) => got.too_long(n),
    }
}

/// Feeds `chunks` to a fresh decoder into `got`; checks `pending()` after every chunk against the
/// bytes of the incomplete line so far.
fn feed(max_line: usize, chunks: &[&[u8]], got: &mut Recorded) -> Result<(), String> {
    got.clear();
    got.reserve(chunks.iter().map(|c| c.len()).sum());
    let mut d = LineDecoder::new(max_line);
    let mut since_nl = 0usize;
    for c in chunks {
        d.push(c, &mut |e| record(got, e));
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
    /// The record of a run and, on a finding, of the whole-stream run, kept between inputs: their
    /// buffers are allocated once, not per execution (a record is cleared before every run).
    static SCRATCH: std::cell::RefCell<(Recorded, Recorded)> = Default::default();
}

/// Runs the check on one input.
pub fn check(data: &[u8]) -> Result<(), String> {
    SCRATCH.with_borrow_mut(|(got, whole)| check_with(data, got, whole))
}

fn check_with(data: &[u8], got: &mut Recorded, whole: &mut Recorded) -> Result<(), String> {
    let input = decode(data);
    // The model is the reference for every cut: the lines of this feeding must be the model's, so
    // no feeding can differ from another (the whole stream in one chunk is the inputs with no
    // chunk lengths). Feeding the stream whole as well, every time, would redo that work.
    feed(input.max_line, &input.chunks, got)?;
    if got.agrees_with_model(input.stream, input.max_line) {
        return Ok(());
    }
    // A finding: say whether the cut matters too.
    let model = oracle::split_lines(input.stream, input.max_line);
    let cut = if input.chunks.len() > 1 {
        feed(input.max_line, &[input.stream], whole)?;
        if *whole == *got {
            " (fed whole it gives the same lines)".to_owned()
        } else {
            format!(
                "; fed whole it gives {:?} tail {:?}",
                whole.to_models(),
                whole.tail
            )
        }
    } else {
        String::new()
    };
    Err(format!(
        "lines differ from the model (bound {}, chunks {:?}):\n  wire  {:?} tail {:?}{cut}\n  model {model:?}",
        input.max_line,
        input.chunks.iter().map(|c| c.len()).collect::<Vec<_>>(),
        got.to_models(),
        got.tail,
    ))
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
