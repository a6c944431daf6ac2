//! What the runtime writes: each stdout line parsed once into an [`Output`], the one typed value
//! every judge reads (the trace matcher, the rule checker, the probes and the reports). Its
//! classification ([`Frame`]) is the only one of the runtime's output in the kit, as
//! [`classify`](super::classify) is the only one of what the runtime reads.
//!
//! A line is classified by the members it has, leniently: an object with a string `method` and no
//! `id` is a notification, one with an `id` and a `result` or an `error` (not both) a response.
//! What else a frame must be (exactly those members, `"jsonrpc":"2.0"`, written compactly) is
//! for the rules to judge (the `dsh-rules` crate), so that a frame with one defect is still routed as
//! what it is, and blamed once, on the rule it breaks.

use super::json::{JsonError, JsonKind, JsonView, Tape, TapeRef};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lines parsed into an [`Output`] in this process (see [`lines_parsed`]).
static PARSED: AtomicUsize = AtomicUsize::new(0);

/// How many lines this process has parsed into an [`Output`] so far: with
/// [`json::tape_parses`](super::json::tape_parses), the proof that nothing parses a line twice.
pub fn lines_parsed() -> usize {
    PARSED.load(Ordering::Relaxed)
}

/// Why a line is no frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAFrame {
    /// Not valid UTF-8: the first invalid byte's offset and the line's length.
    NotUtf8 {
        /// Offset of the first invalid byte.
        at: usize,
        /// Line length in bytes.
        len: usize,
    },
    /// Longer than the reader's bound (its length in bytes; its text was not kept).
    TooLong(usize),
    /// Not JSON, with the parser's error.
    NotJson(JsonError),
    /// JSON, but not an object: what it is (`a JSON array`, …).
    NotAnObject(&'static str),
    /// An object with the members of neither a response nor a notification (their keys).
    Neither(Vec<String>),
}

impl fmt::Display for NotAFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotAFrame::NotUtf8 { at, len } => write!(
                f,
                "not valid UTF-8 (first invalid byte at offset {at} of {len})"
            ),
            NotAFrame::TooLong(n) => write!(f, "{n} bytes long, over the reader's line bound"),
            NotAFrame::NotJson(e) => write!(f, "not JSON ({e})"),
            NotAFrame::NotAnObject(what) => write!(f, "{what}, not a frame object"),
            NotAFrame::Neither(keys) => write!(
                f,
                "an object with members {keys:?}, neither a response nor a notification"
            ),
        }
    }
}

/// What one output line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A response: its id as `JSON.stringify` writes it, and whether it carries a `result`.
    Response {
        /// The id's JSON text, as the runtime's serializer would write the parsed id.
        id: String,
        /// A result (else an error).
        ok: bool,
    },
    /// A notification: its method and the string `params.sessionId` it names, if any.
    Notification {
        /// The method.
        method: String,
        /// `params.sessionId`, when it is a string.
        session: Option<String>,
    },
    /// Not a frame.
    NotAFrame(NotAFrame),
}

/// One stdout line of the runtime, parsed once.
#[derive(Debug, Clone)]
pub struct Output {
    /// 1-based stdout line number (blank lines, which the reader skips, are not counted).
    pub line: usize,
    /// The line ended in `\r\n` (the `\r` is not in [`Output::text`]).
    pub crlf: bool,
    /// Non-ASCII whitespace JavaScript trims that the line began (`true`) or ended with:
    /// [`super::lines::foreign_padding`] of the line as written (set by [`Output::parse`] from its
    /// text, by a reader that trims before parsing from the untrimmed line).
    pub foreign_padding: Option<(char, bool)>,
    text: String,
    /// The parsed text (boxed: most of a flood's lines are no JSON, and a stored line should
    /// cost little more than its text).
    tape: Option<Box<Tape>>,
    frame: Frame,
}

impl Output {
    /// Parses one line (without its `\n`; a trailing `\r` is noted in [`Output::crlf`] and
    /// stripped). The text is kept as given otherwise: the reader trims it as upstream's
    /// decoder does.
    #[inline]
    pub fn parse(line: usize, mut text: String) -> Output {
        PARSED.fetch_add(1, Ordering::Relaxed);
        let crlf = text.ends_with('\r');
        if crlf {
            text.pop();
        }
        let foreign_padding = super::lines::foreign_padding(&text);
        let mut tape = Tape::default();
        let (tape, frame) = match tape.parse(&text) {
            Err(e) => (None, Frame::NotAFrame(NotAFrame::NotJson(e))),
            Ok(()) => {
                tape.shrink();
                let frame = classify(tape.root(&text));
                (Some(Box::new(tape)), frame)
            }
        };
        text.shrink_to_fit();
        Output {
            line,
            crlf,
            foreign_padding,
            text,
            tape,
            frame,
        }
    }

    /// [`Output::parse`] of `text` into this output, reusing its buffers (the text's, the
    /// tape's): for a reader that judges each line as it comes and keeps none (the fuzz targets'
    /// checker), so that a line costs no allocation once the buffers have grown. The result is
    /// the one `parse` gives, but for spare capacity (nothing is shrunk).
    #[inline]
    pub fn reparse(&mut self, line: usize, text: &str) {
        PARSED.fetch_add(1, Ordering::Relaxed);
        let (body, crlf) = match text.strip_suffix('\r') {
            Some(body) => (body, true),
            None => (text, false),
        };
        self.line = line;
        self.crlf = crlf;
        self.foreign_padding = super::lines::foreign_padding(body);
        self.text.clear();
        self.text.push_str(body);
        let mut tape = self.tape.take().unwrap_or_default();
        self.frame = match tape.parse(&self.text) {
            Err(e) => Frame::NotAFrame(NotAFrame::NotJson(e)),
            Ok(()) => {
                let frame = classify(tape.root(&self.text));
                self.tape = Some(tape);
                frame
            }
        };
    }

    /// A line the reader could not keep as text (not UTF-8, or over its bound).
    pub fn unreadable(line: usize, why: NotAFrame) -> Output {
        let text = match &why {
            NotAFrame::NotUtf8 { at, len } => format!("<{len} bytes, not UTF-8 at byte {at}>"),
            NotAFrame::TooLong(n) => format!("<line of {n} bytes over the bound>"),
            other => format!("<{other}>"),
        };
        Output {
            line,
            crlf: false,
            foreign_padding: None,
            text,
            tape: None,
            frame: Frame::NotAFrame(why),
        }
    }

    /// The line's text (for an unreadable line, a `<…>` note).
    #[inline]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What the line is.
    #[inline]
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The line's JSON value, when it is JSON at all.
    #[inline]
    pub fn json(&self) -> Option<TapeRef<'_>> {
        self.tape.as_ref().map(|t| t.root(&self.text))
    }

    /// Whether the line is a response or a notification.
    pub fn is_frame(&self) -> bool {
        !matches!(self.frame, Frame::NotAFrame(_))
    }

    /// The notification's `params`, for a notification of `method`.
    pub fn params_of(&self, method: &str) -> Option<TapeRef<'_>> {
        match &self.frame {
            Frame::Notification { method: m, .. } if m == method => self.json()?.get("params"),
            _ => None,
        }
    }

    /// Bytes the line holds (itself, its text, its tape and its frame's strings), for memory
    /// bounds.
    #[inline]
    pub fn weight(&self) -> usize {
        let frame = match &self.frame {
            Frame::Response { id, .. } => id.capacity(),
            Frame::Notification { method, session } => {
                method.capacity() + session.as_ref().map_or(0, String::capacity)
            }
            Frame::NotAFrame(NotAFrame::Neither(keys)) => {
                keys.iter().map(|k| k.capacity() + 24).sum()
            }
            Frame::NotAFrame(_) => 0,
        };
        let tape = self
            .tape
            .as_ref()
            .map_or(0, |t| std::mem::size_of::<Tape>() + t.weight());
        std::mem::size_of::<Output>() + self.text.capacity() + tape + frame
    }
}

/// The classification of a parsed line.
#[inline]
fn classify(v: TapeRef<'_>) -> Frame {
    let what = match v.kind() {
        JsonKind::Object => None,
        JsonKind::Array => Some("a JSON array"),
        JsonKind::String => Some("a JSON string"),
        JsonKind::Number => Some("a JSON number"),
        JsonKind::Bool => Some("a JSON boolean"),
        JsonKind::Null => Some("JSON null"),
    };
    if let Some(what) = what {
        return Frame::NotAFrame(NotAFrame::NotAnObject(what));
    }
    let id = v.get("id");
    let method = v.get("method").and_then(JsonView::as_str);
    let (result, error) = (v.get("result").is_some(), v.get("error").is_some());
    match (method, id) {
        (Some(m), None) => Frame::Notification {
            method: m.to_owned(),
            session: v
                .get("params")
                .and_then(|p| p.get("sessionId"))
                .and_then(JsonView::as_str)
                .map(str::to_owned),
        },
        (None, Some(id)) if result != error => {
            let mut echo = Vec::new();
            id.write(&mut echo);
            Frame::Response {
                id: String::from_utf8(echo).expect("the JSON writer writes UTF-8"),
                ok: result,
            }
        }
        _ => Frame::NotAFrame(NotAFrame::Neither(
            v.members().map(|(k, _)| k.to_owned()).collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(s: &str) -> Frame {
        Output::parse(1, s.to_owned()).frame().clone()
    }

    #[test]
    fn lines_are_classified_by_their_members() {
        assert_eq!(
            frame(r#"{"jsonrpc":"2.0","id":1e3,"result":{}}"#),
            Frame::Response {
                id: "1000".into(),
                ok: true
            }
        );
        assert_eq!(
            frame(r#"{"id":"a","error":{"code":1,"message":"m"},"x":1}"#),
            Frame::Response {
                id: "\"a\"".into(),
                ok: false
            },
            "extra members and no jsonrpc are the rules' to judge"
        );
        assert_eq!(
            frame(r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s"}}"#),
            Frame::Notification {
                method: "session.event".into(),
                session: Some("s".into())
            }
        );
        assert!(matches!(
            frame(r#"{"id":1,"result":{},"error":{}}"#),
            Frame::NotAFrame(NotAFrame::Neither(_))
        ));
        assert!(matches!(
            frame(r#"{"id":1,"method":"m"}"#),
            Frame::NotAFrame(NotAFrame::Neither(_))
        ));
        assert!(matches!(
            frame("[1]"),
            Frame::NotAFrame(NotAFrame::NotAnObject("a JSON array"))
        ));
        assert!(matches!(
            frame("{nope"),
            Frame::NotAFrame(NotAFrame::NotJson(_))
        ));
    }

    #[test]
    fn reparse_gives_what_parse_gives_line_after_line() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1e3,"result":{"a":[1,{"b":"\u00e9"}]}}"#,
            "{nope",
            "{\"id\":1,\"result\":{}}\r",
            r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","x":"\ud800"}}"#,
            "[1]",
            "",
            r#"{"id":"a","error":{"code":1,"message":"m"},"x":1}"#,
        ];
        let mut reused = Output::parse(1, "{}".into());
        for (i, l) in lines.iter().enumerate() {
            let fresh = Output::parse(i + 2, (*l).to_owned());
            reused.reparse(i + 2, l);
            assert_eq!(
                (reused.line, reused.crlf, reused.text(), reused.frame()),
                (fresh.line, fresh.crlf, fresh.text(), fresh.frame()),
                "{l}"
            );
            assert_eq!(
                reused.json().map(|v| v.to_value()),
                fresh.json().map(|v| v.to_value()),
                "{l}"
            );
        }
    }

    #[test]
    fn a_crlf_line_is_noted_and_parsed_without_its_cr() {
        let o = Output::parse(3, "{\"id\":1,\"result\":{}}\r".into());
        assert!(o.crlf && o.is_frame());
        assert_eq!(o.text(), "{\"id\":1,\"result\":{}}");
        assert_eq!(o.json().unwrap().get("id").unwrap().as_i64(), Some(1));
    }
}
