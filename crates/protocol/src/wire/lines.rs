//! Splitting a byte stream into lines with the upstream decoder's rules (docs/CONTRACT.md#s2.1).
//!
//! Only `\n` ends a line; each line is decoded as UTF-8 with invalid bytes replaced by U+FFFD (the
//! WHATWG "maximal subpart" rule that Node's `StringDecoder` and Rust's `from_utf8_lossy` share),
//! then trimmed with the JavaScript `String.prototype.trim()` whitespace set; blank lines are
//! skipped; an unterminated last line at EOF is dropped. Unlike upstream, a line is bounded: bytes
//! past `max_line` are discarded (and reported) so a hostile stream cannot grow memory without end.

use std::borrow::Cow;

/// Default bound on one line: far above the 10 MB lines the real runtime was seen to handle.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// One event out of the splitter.
#[derive(Debug, PartialEq, Eq)]
pub enum LineEvent<'a> {
    /// A complete, decoded, trimmed, non-blank line (without its `\n`).
    Line(&'a str),
    /// A complete line longer than the bound; its bytes were discarded. Holds its full length.
    TooLong(usize),
}

/// What was left when the stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DroppedTail {
    /// Bytes of the unterminated last line (upstream drops them without a word).
    pub len: usize,
    /// Whether those bytes held anything other than whitespace.
    pub blank: bool,
}

/// Incremental line splitter. Feed chunks with [`LineDecoder::push`], end with [`LineDecoder::finish`].
#[derive(Debug)]
pub struct LineDecoder {
    buf: Vec<u8>,
    max_line: usize,
    /// Length of the current over-long line, while its bytes are being discarded.
    discarding: Option<usize>,
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE)
    }
}

impl LineDecoder {
    /// A splitter that discards lines longer than `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        Self {
            buf: Vec::new(),
            max_line,
            discarding: None,
        }
    }

    /// Bytes held for an incomplete line.
    pub fn pending(&self) -> usize {
        self.buf.len() + self.discarding.unwrap_or(0)
    }

    /// Feeds a chunk; calls `f` for every line it completes, in order (a type parameter, so the
    /// call per line is direct and can be inlined; a `&mut dyn FnMut` is accepted too).
    pub fn push<F>(&mut self, mut chunk: &[u8], f: &mut F)
    where
        F: FnMut(LineEvent<'_>) + ?Sized,
    {
        // Whole lines inside the chunk, with no partial line before them: no copy, one bound check.
        if self.buf.is_empty() && self.discarding.is_none() {
            while let Some(i) = memchr::memchr(b'\n', chunk) {
                if i > self.max_line {
                    f(LineEvent::TooLong(i));
                } else {
                    emit(&chunk[..i], f);
                }
                chunk = &chunk[i + 1..];
            }
        }
        while !chunk.is_empty() {
            let nl = memchr::memchr(b'\n', chunk);
            let (seg, rest) = match nl {
                Some(i) => (&chunk[..i], Some(&chunk[i + 1..])),
                None => (chunk, None),
            };
            if let Some(n) = self.discarding.as_mut() {
                *n += seg.len();
            } else if self.buf.len() + seg.len() > self.max_line {
                self.discarding = Some(self.buf.len() + seg.len());
                self.buf = Vec::new();
            } else if rest.is_some() && self.buf.is_empty() {
                // Whole line inside this chunk: no copy.
                emit(seg, f);
            } else {
                self.buf.extend_from_slice(seg);
            }
            match rest {
                Some(r) => {
                    if let Some(n) = self.discarding.take() {
                        f(LineEvent::TooLong(n));
                    } else if !self.buf.is_empty() {
                        let line = std::mem::take(&mut self.buf);
                        emit(&line, f);
                        self.buf = line;
                        self.buf.clear();
                    }
                    chunk = r;
                }
                None => break,
            }
        }
    }

    /// Ends the stream. Upstream drops an unterminated last line; this says whether there was one.
    pub fn finish(&mut self) -> Option<DroppedTail> {
        let tail = if let Some(n) = self.discarding.take() {
            Some(DroppedTail {
                len: n,
                blank: false,
            })
        } else if !self.buf.is_empty() {
            let text = String::from_utf8_lossy(&self.buf);
            Some(DroppedTail {
                len: self.buf.len(),
                blank: trim_js(&text).is_empty(),
            })
        } else {
            None
        };
        self.buf.clear();
        tail
    }
}

/// A line's bytes decoded as the splitter decodes them, before trimming: UTF-8, each maximal
/// invalid subpart replaced by U+FFFD (`from_utf8_lossy`'s rule).
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    // Valid UTF-8 (nearly every line) goes through `from_utf8`, whose ASCII fast path is several
    // times quicker than the byte-at-a-time scan `from_utf8_lossy` starts with; same result.
    // (Both are precompiled in std: in a coverage-instrumented build a hand-written decoding
    // loop here would carry comparison hooks that these do not.)
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

fn emit<F>(bytes: &[u8], f: &mut F)
where
    F: FnMut(LineEvent<'_>) + ?Sized,
{
    let text = decode(bytes);
    let line = trim_js(&text);
    if !line.is_empty() {
        f(LineEvent::Line(line));
    }
}

/// Whether `c` is stripped by JavaScript's `String.prototype.trim()` (WhiteSpace + LineTerminator).
#[inline]
pub const fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// The whitespace around line `s` that JavaScript's `trim()` strips but that is not ASCII (a BOM,
/// a no-break space, a line separator …), and whether it is at the start: Python's `json.loads`
/// refuses a line with one, so the Python SDK loses that frame. `None` when there is none (a
/// frame's first and last bytes are ASCII: nothing is decoded then).
#[inline]
pub fn foreign_padding(s: &str) -> Option<(char, bool)> {
    let s = s.strip_suffix('\r').unwrap_or(s);
    let foreign = |c: &char| !c.is_ascii() && is_js_whitespace(*c);
    let first = s.chars().next().filter(foreign).map(|c| (c, true));
    first.or_else(|| s.chars().next_back().filter(foreign).map(|c| (c, false)))
}

/// `String.prototype.trim()`.
#[inline]
pub fn trim_js(s: &str) -> &str {
    let b = s.as_bytes();
    // Nearly every line starts with a byte no whitespace starts with and ends with one no
    // whitespace ends with: nothing to strip (two table reads, no comparison chain).
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) if !WS_FIRST[usize::from(f)] && !WS_LAST[usize::from(l)] => return s,
        (None, _) | (_, None) => return s,
        _ => {}
    }
    // A character is decoded only where the table says whitespace may start (or end) there.
    let mut t = s;
    while let Some(c) = t
        .chars()
        .next()
        .filter(|_| WS_FIRST[usize::from(t.as_bytes()[0])])
    {
        if !is_js_whitespace(c) {
            break;
        }
        t = &t[c.len_utf8()..];
    }
    while let Some(c) = t
        .chars()
        .next_back()
        .filter(|_| WS_LAST[usize::from(t.as_bytes()[t.len() - 1])])
    {
        if !is_js_whitespace(c) {
            break;
        }
        t = &t[..t.len() - c.len_utf8()];
    }
    t
}

/// Whether a JavaScript whitespace character ([`is_js_whitespace`]) starts with this byte.
static WS_FIRST: [bool; 256] = ends_of_js_whitespace(false);
/// Whether a JavaScript whitespace character ends with this byte.
static WS_LAST: [bool; 256] = ends_of_js_whitespace(true);

/// The first (or last) UTF-8 bytes of every JavaScript whitespace character, derived from
/// [`is_js_whitespace`]. Every one is in the Basic Multilingual Plane (the unit test checks all of
/// Unicode), so the scan stops there.
const fn ends_of_js_whitespace(last: bool) -> [bool; 256] {
    let mut set = [false; 256];
    let mut u = 0u32;
    while u < 0x1_0000 {
        if let Some(c) = char::from_u32(u) {
            if is_js_whitespace(c) {
                let mut buf = [0u8; 4];
                let n = c.encode_utf8(&mut buf).len();
                set[buf[if last { n - 1 } else { 0 }] as usize] = true;
            }
        }
        u += 1;
    }
    set
}

/// Splits a whole byte stream; convenience for tests and tools. Returns the lines and the dropped tail.
pub fn split_all(
    bytes: &[u8],
    max_line: usize,
) -> (Vec<Result<String, usize>>, Option<DroppedTail>) {
    let mut d = LineDecoder::new(max_line);
    let mut out = Vec::new();
    d.push(bytes, &mut |e| match e {
        LineEvent::Line(l) => out.push(Ok(l.to_owned())),
        LineEvent::TooLong(n) => out.push(Err(n)),
    });
    let tail = d.finish();
    (out, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> (Vec<String>, Option<DroppedTail>) {
        let mut d = LineDecoder::new(1024);
        let mut out = Vec::new();
        for c in chunks {
            d.push(c, &mut |e| match e {
                LineEvent::Line(l) => out.push(l.to_owned()),
                LineEvent::TooLong(n) => out.push(format!("<too long {n}>")),
            });
        }
        (out, d.finish())
    }

    #[test]
    fn invalid_utf8_decodes_as_from_utf8_lossy_does() {
        let cases: [&[u8]; 9] = [
            b"\xff",
            b"ab\xffcd",
            b"\xe2\x82",
            b"x\xe2\x82",
            b"\xed\xa0\x80z",
            b"\xc0\xafq",
            b"\xf4\x90\x80\x80",
            b"\xe2\x82\xac\xf0\x9f\x98",
            b" \xc2\xa0\xff\xc2\xa0 ",
        ];
        let mut stream = Vec::new();
        for c in cases {
            stream.extend_from_slice(c);
            stream.push(b'\n');
        }
        let (got, _) = split_all(&stream, DEFAULT_MAX_LINE);
        let want: Vec<Result<String, usize>> = cases
            .iter()
            .map(|c| Ok(trim_js(&String::from_utf8_lossy(c)).to_owned()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_byte_tables_hold_the_ends_of_every_js_whitespace_character() {
        let mut found = 0;
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            if is_js_whitespace(c) {
                let mut buf = [0u8; 4];
                let b = c.encode_utf8(&mut buf).as_bytes();
                assert!(WS_FIRST[usize::from(b[0])], "{c:?}");
                assert!(WS_LAST[usize::from(b[b.len() - 1])], "{c:?}");
                found += 1;
            }
        }
        // \t..\r, space, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF.
        assert_eq!(found, 25);
        // The fast path: printable ASCII and U+FFFD's ends are no whitespace ends.
        assert!(!WS_FIRST[usize::from(b'{')] && !WS_LAST[usize::from(b'}')]);
        assert!(!WS_LAST[0xbd]);
    }

    #[test]
    fn trim_js_trims_as_the_character_scan_does() {
        let parts = [
            "",
            "a",
            "{",
            " ",
            "\t",
            "\r",
            "\u{b}",
            "\u{a0}",
            "\u{feff}",
            "é",
            "\u{85}",
            "x y",
            "\u{2028}",
            " \u{3000}\t",
            "é ",
            "\u{fffd}",
            "\u{200b}",
            "\u{180e}",
            "\u{2030}",
            "\u{1f600}",
        ];
        // Every character that is JavaScript whitespace, and its neighbours, trimmed alone and
        // around text.
        for c in (0..0x3100).chain(0xfef0..0xff00).filter_map(char::from_u32) {
            for s in [
                format!("{c}"),
                format!("{c}x{c}"),
                format!("x{c}"),
                format!("{c}{c}é"),
            ] {
                assert_eq!(trim_js(&s), s.trim_matches(is_js_whitespace), "{s:?}");
            }
        }
        for a in parts {
            for b in parts {
                for c in parts {
                    let s = format!("{a}{b}{c}");
                    assert_eq!(trim_js(&s), s.trim_matches(is_js_whitespace), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn only_newline_ends_a_line_and_a_lone_cr_does_not() {
        let (l, _) = lines(&[b"A\rB\nC\r\n"]);
        assert_eq!(l, vec!["A\rB", "C"]);
    }

    #[test]
    fn blank_and_whitespace_only_lines_are_skipped() {
        let (l, _) = lines(&[b"\n  \n\t\n \xc2\xa0\n{} \n"]);
        assert_eq!(l, vec!["{}"]);
    }

    #[test]
    fn bom_nbsp_and_unicode_line_separators_are_trimmed() {
        let (l, _) = lines(&["\u{feff}{\"a\":1}\u{2028}\u{2029}\u{a0}\u{3000}\n".as_bytes()]);
        assert_eq!(l, vec!["{\"a\":1}"]);
        // U+0085 is whitespace to Rust but not to JavaScript.
        assert!(!is_js_whitespace('\u{85}'));
    }

    #[test]
    fn a_multibyte_character_split_across_chunks_is_reassembled() {
        let euro = "€".as_bytes();
        let (l, _) = lines(&[b"\"", &euro[..1], &euro[1..], b"\"\n"]);
        assert_eq!(l, vec!["\"€\""]);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters_per_maximal_subpart() {
        let (l, _) = lines(&[b"\xff\xfe|\xc0\xaf|\xed\xa0\x80\n"]);
        assert_eq!(
            l,
            vec!["\u{FFFD}\u{FFFD}|\u{FFFD}\u{FFFD}|\u{FFFD}\u{FFFD}\u{FFFD}"]
        );
    }

    #[test]
    fn an_unterminated_last_line_is_dropped_and_reported() {
        let (l, tail) = lines(&[b"{}\n{\"id\":1"]);
        assert_eq!(l, vec!["{}"]);
        assert_eq!(
            tail,
            Some(DroppedTail {
                len: 7,
                blank: false
            })
        );
        let (_, tail) = lines(&[b"{}\n"]);
        assert_eq!(tail, None);
    }

    #[test]
    fn over_long_lines_are_discarded_without_buffering_them() {
        let mut d = LineDecoder::new(8);
        let mut out = Vec::new();
        for _ in 0..1000 {
            d.push(&[b'x'; 1000], &mut |_| panic!("no line yet"));
            assert!(
                d.buf.capacity() <= 16,
                "discarded bytes must not be buffered"
            );
        }
        d.push(b"\nok\n", &mut |e| out.push(format!("{e:?}")));
        assert_eq!(out, vec!["TooLong(1000000)", "Line(\"ok\")"]);
    }

    #[test]
    fn chunking_does_not_change_the_lines() {
        let data = b"{\"a\":1}\r\n\n  x \n\xe2\x82\xacy\nlast";
        let whole = lines(&[data]);
        for cut in 0..data.len() {
            let (a, b) = data.split_at(cut);
            assert_eq!(lines(&[a, b]), whole, "cut at {cut}");
        }
    }
}
