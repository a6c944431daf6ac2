//! The oracle's `drainLines` and `handleLine`: the line model and the classification `if` chain.

use super::{is_js_space, json_parse, JKind, J};

/// One event of the line model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineModel {
    /// A complete, non-blank line after decoding and trimming.
    Line(String),
    /// A complete line of this many bytes, over the bound.
    TooLong(usize),
}

/// The unterminated tail of a stream: `(bytes, whether it was blank)`; an over-long tail is never
/// called blank (its bytes were not kept to look at).
pub type TailModel = Option<(usize, bool)>;

/// One event of the line model, borrowed: what [`each_line`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRef<'a> {
    /// A complete, non-blank line after decoding and trimming.
    Line(&'a str),
    /// A complete line of this many bytes, over the bound.
    TooLong(usize),
}

impl LineRef<'_> {
    /// The owned event.
    pub fn to_model(self) -> LineModel {
        match self {
            LineRef::Line(l) => LineModel::Line(l.to_owned()),
            LineRef::TooLong(n) => LineModel::TooLong(n),
        }
    }
}

/// `drainLines` over a whole stream, plus the kit's line bound: only `\n` ends a line, each line is
/// decoded (invalid UTF-8 → U+FFFD) and trimmed, blank lines vanish, the tail is not a line.
pub fn split_lines(bytes: &[u8], max_line: usize) -> (Vec<LineModel>, TailModel) {
    let mut lines = Vec::new();
    let tail = each_line(bytes, max_line, &mut |l| lines.push(l.to_model()));
    (lines, tail)
}

/// [`split_lines`] reporting each event to `f` as it is found instead of collecting owned lines
/// (a line is borrowed from `bytes` when it is valid UTF-8); returns the tail.
pub fn each_line(bytes: &[u8], max_line: usize, f: &mut dyn FnMut(LineRef<'_>)) -> TailModel {
    // Every piece between `\n`s is a line; the piece after the last one is the unterminated tail.
    // (This crate is built without coverage instrumentation, so the per-byte comparison costs the
    // fuzzer no hook.)
    let mut pieces = bytes.split(|&b| b == b'\n');
    let mut tail = pieces.next().unwrap_or_default();
    for next in pieces {
        let p = std::mem::replace(&mut tail, next);
        if p.len() > max_line {
            f(LineRef::TooLong(p.len()));
        } else {
            let text = String::from_utf8_lossy(p);
            let t = text.trim_matches(is_js_space);
            if !t.is_empty() {
                f(LineRef::Line(t));
            }
        }
    }
    match tail.len() {
        0 => None,
        n if n > max_line => Some((n, false)),
        n => Some((
            n,
            String::from_utf8_lossy(tail)
                .trim_matches(is_js_space)
                .is_empty(),
        )),
    }
}

/// The events of one run of the splitter under test, recorded without an allocation per line (the
/// lines' text in one buffer) and compared with [`each_line`] as the model finds its lines.
///
/// Harness, not model: it lives here, beside the model it is compared with, so that in fuzz builds
/// the recording and the comparison run without coverage instrumentation, like the model.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LineRecord {
    text: String,
    /// Per event: the end of a line in `text`, or an over-long line's length.
    events: Vec<Result<usize, usize>>,
    /// The dropped tail, `(bytes, blank)`.
    pub tail: TailModel,
}

impl LineRecord {
    /// Empties the record, keeping its buffers.
    pub fn clear(&mut self) {
        self.text.clear();
        self.events.clear();
        self.tail = None;
    }

    /// Reserves room for `bytes` of line text.
    pub fn reserve(&mut self, bytes: usize) {
        self.text.reserve(bytes);
    }

    /// Records a line.
    pub fn line(&mut self, l: &str) {
        self.text.push_str(l);
        self.events.push(Ok(self.text.len()));
    }

    /// Records a line over the bound, of `n` bytes.
    pub fn too_long(&mut self, n: usize) {
        self.events.push(Err(n));
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

    /// Whether the model splits `stream` into exactly these events and tail.
    pub fn agrees_with_model(&self, stream: &[u8], max_line: usize) -> bool {
        let mut mine = self.iter();
        let mut same = true;
        let tail = each_line(stream, max_line, &mut |l| {
            same &= mine.next() == Some(l);
        });
        same && mine.next().is_none() && tail == self.tail
    }
}

/// A request/response id as `handleLine` accepts it.
#[derive(Debug, Clone, PartialEq)]
pub enum MId {
    /// `typeof id === 'string'`.
    Str(Vec<u16>),
    /// `typeof id === 'number'` (may be ±Infinity).
    Num(f64),
}

/// What `handleLine` does with one line. Members are kept as sent (`None` = undefined) so that a
/// caller can compare kinds under its own rules.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// `JSON.parse` threw (`blank` when the line was empty).
    Malformed {
        /// The line was empty.
        blank: bool,
    },
    /// Parsed, but `!message || typeof message !== 'object'`: the scalar.
    NotAnObject(J),
    /// An array: `.id`/`.method` are undefined, so nothing happens. Holds its length.
    Batch(usize),
    /// An object with neither a usable id nor a string method.
    Dropped {
        /// `frame.id`.
        id: Option<J>,
        /// `frame.method`.
        method: Option<J>,
    },
    /// `request(id, method, objectParams(params))`.
    Request {
        /// The id.
        id: MId,
        /// The method.
        method: Vec<u16>,
        /// `objectParams(frame.params)`: the object, or `{}`.
        params: J,
        /// `frame.params` as sent.
        params_sent: Option<J>,
    },
    /// `response(id, frame)`.
    Response {
        /// The id.
        id: MId,
        /// `frame.error && typeof frame.error === 'object'`: `Some((code if a number, message if a
        /// string, data))`; otherwise `None` and the frame resolves with `result`.
        error: Option<ErrorModel>,
        /// `frame.result` (`None` = undefined).
        result: Option<J>,
        /// `frame.method` (not a string, or absent).
        method: Option<J>,
    },
    /// `notificationHandler(method, objectParams(params))`.
    Notification {
        /// The method.
        method: Vec<u16>,
        /// `objectParams(frame.params)`.
        params: J,
        /// `frame.params` as sent.
        params_sent: Option<J>,
        /// `frame.id` (absent, or not a string/number).
        id: Option<J>,
    },
}

/// A rejecting error member: `code` when a number, `message` when a string, `data` verbatim.
pub type ErrorModel = (Option<f64>, Option<Vec<u16>>, Option<J>);

/// `handleLine(line)` (docs/CONTRACT.md#s2.2), on a line that was already trimmed (or not:
/// `JSON.parse` decides).
pub fn handle_line(line: &str) -> Model {
    handle_parsed(line, json_parse(line).as_ref())
}

/// [`handle_line`] on `message`, the line's [`json_parse`] (`None` = `JSON.parse` threw), for a
/// caller that needs the parsed value too and should not parse the line twice.
pub fn handle_parsed(line: &str, message: Option<&J>) -> Model {
    let Some(message) = message else {
        return Model::Malformed {
            blank: line.is_empty(),
        };
    };
    match message {
        J::Arr(a) => return Model::Batch(a.len()),
        J::Obj(_) => {}
        // The top level is always parsed recursively, so it is never `Deep`.
        other => return Model::NotAnObject(other.clone()),
    }
    let id = match message.get("id") {
        Some(J::Str(s)) => Some(MId::Str(s.clone())),
        Some(J::Num(n)) => Some(MId::Num(*n)),
        _ => None,
    };
    let method = match message.get("method") {
        Some(J::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let member = |k: &str| message.get(k).cloned();
    let object_params = || match message.get("params") {
        Some(p @ (J::Obj(_) | J::Deep(JKind::Object))) => p.clone(),
        _ => J::Obj(Vec::new()),
    };
    match (id, method) {
        (Some(id), Some(method)) => Model::Request {
            id,
            method,
            params: object_params(),
            params_sent: member("params"),
        },
        (Some(id), None) => {
            let error = match message.get("error") {
                Some(e @ (J::Obj(_) | J::Arr(_) | J::Deep(_))) => Some((
                    match e.get("code") {
                        Some(J::Num(c)) => Some(*c),
                        _ => None,
                    },
                    match e.get("message") {
                        Some(J::Str(s)) => Some(s.clone()),
                        _ => None,
                    },
                    e.get("data").cloned(),
                )),
                _ => None,
            };
            Model::Response {
                id,
                error,
                result: member("result"),
                method: member("method"),
            }
        }
        (None, Some(method)) => Model::Notification {
            method,
            params: object_params(),
            params_sent: member("params"),
            id: member("id"),
        },
        (None, None) => Model::Dropped {
            id: member("id"),
            method: member("method"),
        },
    }
}
