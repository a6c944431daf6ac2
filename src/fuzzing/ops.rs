//! Structure-aware client operations (`arbitrary` derive) and their rendering as wire bytes.
//!
//! An [`Op`] is what a client (or a hostile peer) might write: well-formed requests of every
//! method with fuzzed params and ids, prompts carrying model directives to a few sessions, raw
//! text, notifications, responses to ids nobody asked about, time passing, EOF. The same ops drive
//! the in-memory reference runtime (`runtime_session`) and, later, any runtime over stdio.

use crate::wire::json::{self, write_str};
use arbitrary::Arbitrary;
use serde_json::{Map, Value};

/// Longest string taken from the fuzzer for names, texts and paths.
const SMALL: usize = 40;
/// Deepest nesting of generated values and directives.
const MAX_NEST: usize = 6;

/// A string kept short.
#[derive(Debug, Clone, PartialEq)]
pub struct Small(pub String);

impl<'a> Arbitrary<'a> for Small {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        // Lossy, so that invalid UTF-8 from the fuzzer still yields a string (and U+FFFD).
        let len = u.int_in_range(0..=SMALL)?.min(u.len());
        Ok(Small(String::from_utf8_lossy(u.bytes(len)?).into_owned()))
    }
}

/// One thing written to the runtime.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    /// `session/prompt` with content blocks carrying model directives.
    Prompt {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
        /// `contentBlocks`.
        blocks: BlocksGen,
    },
    /// `initialize`.
    Initialize {
        /// Request id.
        id: IdGen,
        /// `cwd`.
        cwd: PathGen,
        /// `provider`.
        provider: ProviderGen,
        /// `maxTokens` (absent when `None`).
        max_tokens: Option<NumGen>,
        /// `reasoningEffort` (absent when `None`).
        effort: Option<ValGen>,
    },
    /// `session/wait`.
    Wait {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
    },
    /// `session/resume`.
    Resume {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
    },
    /// `session/working-directory/get`.
    WdGet {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
    },
    /// `session/working-directory/set`.
    WdSet {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
        /// `path`.
        path: PathGen,
    },
    /// `shutdown`.
    Shutdown {
        /// Request id.
        id: IdGen,
    },
    /// A request of any method with any params (`params` may be any JSON, or absent).
    Request {
        /// Request id.
        id: IdGen,
        /// `method`.
        method: MethodGen,
        /// `params`.
        params: Option<ValGen>,
    },
    /// A notification (no id): must produce no output.
    Notification {
        /// `method`.
        method: MethodGen,
        /// `params`.
        params: Option<ValGen>,
    },
    /// A response to an id the runtime never used: must produce no output.
    Response {
        /// `id`.
        id: IdGen,
        /// `error` member instead of `result`.
        error: bool,
        /// The result or error value.
        value: ValGen,
    },
    /// Raw text, written as is (it may lack a newline and merge with the next op's line).
    Raw(RawGen),
    /// Virtual time passes (milliseconds); scheduled work runs.
    Advance(u16),
    /// Stdin closes.
    Eof,
    /// The runtime process is replaced by a new one on the same `DSH_HOME` (persisted sessions
    /// can then be resumed).
    Restart,
}

/// A request id, spelled as JSON text.
#[derive(Arbitrary, Debug, Clone)]
pub enum IdGen {
    /// A small integer.
    Num(u16),
    /// A short string.
    Str(Small),
    /// The previous op's id again (duplicate ids are legal; each still gets its answer).
    Again,
    /// `0`.
    Zero,
    /// `""`.
    Empty,
    /// `1.5`.
    Float,
    /// `-0`.
    NegZero,
    /// `1e400` (Infinity: echoed as `null`).
    Inf,
    /// `12345678901234567890` (echoed as `12345678901234567000`).
    Big,
    /// `null`: makes the frame a notification.
    Null,
    /// `true`: makes the frame a notification.
    Bool,
}

/// A `sessionId` member.
#[derive(Arbitrary, Debug, Clone)]
pub enum SessionGen {
    /// One of a few ids, so that ops meet on the same sessions.
    Pick(u8),
    /// `""` (accepted by prompt; the real runtime's turn then fails).
    Empty,
    /// Absent.
    Missing,
    /// Path-like ids.
    Odd(OddSession),
    /// Any short string.
    Any(Small),
    /// A number instead of a string.
    Number(i8),
}

/// Session ids that look like paths.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum OddSession {
    /// `.`
    Dot,
    /// `..`
    DotDot,
    /// `a/b`
    Slash,
    /// `../x`
    Escape,
    /// `s1 ` (trailing space)
    Space,
}

/// The `contentBlocks` member.
#[derive(Arbitrary, Debug, Clone)]
pub enum BlocksGen {
    /// An array of blocks.
    List(Vec<BlockGen>),
    /// Absent (the real runtime fails after creating the session).
    Missing,
    /// Not an array.
    Other(ValGen),
}

/// One content block.
#[derive(Arbitrary, Debug, Clone)]
pub enum BlockGen {
    /// `{"type":"text","text":<directive>}`.
    Text(Directive),
    /// An image block, with or without `data`.
    Image {
        /// Carries `data` (needs an attachment store).
        data: bool,
    },
    /// A text block whose `text` is not a string.
    BadText(ValGen),
    /// Any other block value.
    Other(ValGen),
}

/// A scripted-model directive (traces/README.md), rendered as the start of a text block.
#[derive(Arbitrary, Debug, Clone)]
pub enum Directive {
    /// `reply: X`.
    Reply(Small),
    /// No directive: echoed.
    Plain(Small),
    /// `maxtokens`.
    MaxTokens,
    /// `thinking`.
    Thinking,
    /// `empty`.
    Empty,
    /// `tool` / `tool: CMD`.
    Tool(Option<Small>),
    /// `error500`.
    Error500,
    /// `error400`.
    Error400,
    /// `sseerror`.
    SseError,
    /// `truncate`.
    Truncate,
    /// `hang`: the turn never ends.
    Hang,
    /// `slow:N <inner>` (N in tenths of a second, so time advances matter).
    Slow(u8, Box<Directive>),
    /// `subagent: <inner>`: a child session runs the inner directive.
    Subagent(Box<Directive>),
}

/// A path for `cwd` / `path`.
#[derive(Arbitrary, Debug, Clone)]
pub enum PathGen {
    /// `/`.
    Root,
    /// `/tmp`.
    Tmp,
    /// `.`.
    Dot,
    /// `..`.
    DotDot,
    /// `""`.
    Empty,
    /// A directory that does not exist.
    Missing,
    /// Any short string.
    Any(Small),
    /// Not a string.
    NotString(ValGen),
    /// Absent.
    Absent,
}

/// `provider` of `initialize`.
#[derive(Arbitrary, Debug, Clone)]
pub enum ProviderGen {
    /// `deepseek-official`.
    Official,
    /// Another provider (no adapter).
    Other(Small),
    /// Absent.
    Absent,
}

/// A number for `maxTokens`.
#[derive(Arbitrary, Debug, Clone)]
pub enum NumGen {
    /// A small positive integer.
    Small(u16),
    /// `0`.
    Zero,
    /// `-1`.
    Neg,
    /// `1.5`.
    Frac,
    /// `9007199254740991`.
    MaxSafe,
    /// `9007199254740992`.
    Unsafe,
    /// `"5"`.
    Str,
    /// `null`.
    Null,
}

/// A method name.
#[derive(Arbitrary, Debug, Clone)]
pub enum MethodGen {
    /// One of the protocol's methods, or a near miss.
    Known(KnownMethod),
    /// Any short string.
    Any(Small),
}

/// Method names worth hitting on purpose.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum KnownMethod {
    /// `initialize`
    Initialize,
    /// `session/prompt`
    Prompt,
    /// `session/resume`
    Resume,
    /// `session/wait`
    Wait,
    /// `session/working-directory/get`
    WdGet,
    /// `session/working-directory/set`
    WdSet,
    /// `shutdown`
    Shutdown,
    /// `session/cancel` (never existed)
    Cancel,
    /// `Initialize` (case matters)
    CaseMiss,
    /// `""`
    Empty,
    /// `session/prompt ` (trailing space)
    Trailing,
}

/// A JSON value (depth-limited when rendered).
#[derive(Arbitrary, Debug, Clone)]
pub enum ValGen {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i32),
    /// A double (non-finite ones render as `null`).
    Float(f64),
    /// A short string.
    Str(Small),
    /// An array.
    Arr(Vec<ValGen>),
    /// An object.
    Obj(Vec<(KeyGen, ValGen)>),
}

/// An object key: protocol member names collide on purpose.
#[derive(Arbitrary, Debug, Clone)]
pub enum KeyGen {
    /// `sessionId`.
    SessionId,
    /// `contentBlocks`.
    ContentBlocks,
    /// `cwd`.
    Cwd,
    /// `path`.
    Path,
    /// `type`.
    Type,
    /// `text`.
    Text,
    /// `maxTokens`.
    MaxTokens,
    /// Any short string.
    Any(Small),
}

/// Raw bytes for a line.
#[derive(Arbitrary, Debug, Clone)]
pub enum RawGen {
    /// Text followed by `\n`.
    Line(Small),
    /// Bytes as they are (may hold invalid UTF-8, CRs, or no newline at all).
    Bytes(Vec<u8>),
    /// A blank line.
    Blank,
    /// A request line with a CRLF ending and a BOM in front.
    BomCrlf,
    /// A batch holding one request.
    Batch,
}

/// Renders ops to bytes; remembers the last id for [`IdGen::Again`].
#[derive(Debug, Default)]
pub struct Renderer {
    last_id: Option<String>,
    counter: u64,
}

impl Renderer {
    /// Appends the bytes of one op (nothing for [`Op::Advance`], [`Op::Eof`] and [`Op::Restart`]).
    pub fn render(&mut self, op: &Op, out: &mut Vec<u8>) {
        match op {
            Op::Prompt {
                id,
                session,
                blocks,
            } => {
                let mut p = Map::new();
                session.put(&mut p);
                match blocks {
                    BlocksGen::List(b) => {
                        let list = b.iter().map(BlockGen::value).collect();
                        p.insert("contentBlocks".into(), Value::Array(list));
                    }
                    BlocksGen::Missing => {}
                    BlocksGen::Other(v) => {
                        p.insert("contentBlocks".into(), v.value(0));
                    }
                }
                self.request(id, "session/prompt", Some(&Value::Object(p)), out);
            }
            Op::Initialize {
                id,
                cwd,
                provider,
                max_tokens,
                effort,
            } => {
                let mut p = Map::new();
                cwd.put("cwd", &mut p);
                match provider {
                    ProviderGen::Official => {
                        p.insert("provider".into(), "deepseek-official".into());
                    }
                    ProviderGen::Other(s) => {
                        p.insert("provider".into(), s.0.clone().into());
                    }
                    ProviderGen::Absent => {}
                }
                p.insert("model".into(), "deepseek-v4-flash".into());
                if let Some(n) = max_tokens {
                    p.insert("maxTokens".into(), n.value());
                }
                if let Some(e) = effort {
                    p.insert("reasoningEffort".into(), e.value(0));
                }
                self.request(id, "initialize", Some(&Value::Object(p)), out);
            }
            Op::Wait { id, session } => self.session_request(id, "session/wait", session, out),
            Op::Resume { id, session } => self.session_request(id, "session/resume", session, out),
            Op::WdGet { id, session } => {
                self.session_request(id, "session/working-directory/get", session, out)
            }
            Op::WdSet { id, session, path } => {
                let mut p = Map::new();
                session.put(&mut p);
                path.put("path", &mut p);
                self.request(
                    id,
                    "session/working-directory/set",
                    Some(&Value::Object(p)),
                    out,
                );
            }
            Op::Shutdown { id } => self.request(id, "shutdown", None, out),
            Op::Request { id, method, params } => {
                let params = params.as_ref().map(|v| v.value(0));
                self.request(id, &method.name(), params.as_ref(), out);
            }
            Op::Notification { method, params } => {
                out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
                write_str(&method.name(), out);
                if let Some(p) = params {
                    out.extend_from_slice(b",\"params\":");
                    json::write_value(&p.value(0), out);
                }
                out.extend_from_slice(b"}\n");
            }
            Op::Response { id, error, value } => {
                out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
                let id = self.id_text(id);
                out.extend_from_slice(id.as_bytes());
                out.extend_from_slice(if *error {
                    b",\"error\":".as_slice()
                } else {
                    b",\"result\":".as_slice()
                });
                json::write_value(&value.value(0), out);
                out.extend_from_slice(b"}\n");
            }
            Op::Raw(r) => match r {
                RawGen::Line(s) => {
                    out.extend_from_slice(s.0.as_bytes());
                    out.push(b'\n');
                }
                RawGen::Bytes(b) => out.extend_from_slice(&b[..b.len().min(256)]),
                RawGen::Blank => out.extend_from_slice(b" \t\r\n"),
                RawGen::BomCrlf => {
                    out.extend_from_slice("\u{feff}".as_bytes());
                    let id = self.fresh();
                    out.extend_from_slice(
                        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"probe/bom\"}}\r\n")
                            .as_bytes(),
                    );
                }
                RawGen::Batch => {
                    let id = self.fresh();
                    out.extend_from_slice(
                        format!("[{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"shutdown\"}}]\n")
                            .as_bytes(),
                    );
                }
            },
            Op::Advance(_) | Op::Eof | Op::Restart => {}
        }
    }

    fn session_request(&mut self, id: &IdGen, method: &str, s: &SessionGen, out: &mut Vec<u8>) {
        let mut p = Map::new();
        s.put(&mut p);
        self.request(id, method, Some(&Value::Object(p)), out);
    }

    fn request(&mut self, id: &IdGen, method: &str, params: Option<&Value>, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        let id = self.id_text(id);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b",\"method\":");
        write_str(method, out);
        if let Some(p) = params {
            out.extend_from_slice(b",\"params\":");
            json::write_value(p, out);
        }
        out.extend_from_slice(b"}\n");
    }

    fn fresh(&mut self) -> String {
        self.counter += 1;
        format!("\"r{}\"", self.counter)
    }

    fn id_text(&mut self, id: &IdGen) -> String {
        let text = match id {
            IdGen::Num(n) => n.to_string(),
            IdGen::Str(s) => {
                let mut v = Vec::new();
                write_str(&s.0, &mut v);
                String::from_utf8(v).unwrap_or_default()
            }
            IdGen::Again => self.last_id.clone().unwrap_or_else(|| "1".into()),
            IdGen::Zero => "0".into(),
            IdGen::Empty => "\"\"".into(),
            IdGen::Float => "1.5".into(),
            IdGen::NegZero => "-0".into(),
            IdGen::Inf => "1e400".into(),
            IdGen::Big => "12345678901234567890".into(),
            IdGen::Null => "null".into(),
            IdGen::Bool => "true".into(),
        };
        self.last_id = Some(text.clone());
        text
    }
}

impl SessionGen {
    fn put(&self, p: &mut Map<String, Value>) {
        let v: Value = match self {
            SessionGen::Pick(n) => format!("s{}", n % 3).into(),
            SessionGen::Empty => "".into(),
            SessionGen::Missing => return,
            SessionGen::Odd(o) => match o {
                OddSession::Dot => ".",
                OddSession::DotDot => "..",
                OddSession::Slash => "a/b",
                OddSession::Escape => "../x",
                OddSession::Space => "s1 ",
            }
            .into(),
            SessionGen::Any(s) => s.0.clone().into(),
            SessionGen::Number(n) => (*n).into(),
        };
        p.insert("sessionId".into(), v);
    }
}

impl BlockGen {
    fn value(&self) -> Value {
        let mut m = Map::new();
        match self {
            BlockGen::Text(d) => {
                m.insert("type".into(), "text".into());
                let mut text = String::new();
                d.render(0, &mut text);
                m.insert("text".into(), text.into());
            }
            BlockGen::Image { data } => {
                m.insert("type".into(), "image".into());
                m.insert("mimeType".into(), "image/png".into());
                if *data {
                    m.insert("data".into(), "iVBORw0KGgo=".into());
                }
            }
            BlockGen::BadText(v) => {
                m.insert("type".into(), "text".into());
                m.insert("text".into(), v.value(0));
            }
            BlockGen::Other(v) => return v.value(0),
        }
        Value::Object(m)
    }
}

impl Directive {
    /// Appends the directive's text.
    pub fn render(&self, depth: usize, out: &mut String) {
        if depth > MAX_NEST {
            out.push_str("reply: deep");
            return;
        }
        match self {
            Directive::Reply(s) => {
                out.push_str("reply: ");
                out.push_str(&s.0);
            }
            Directive::Plain(s) => out.push_str(&s.0),
            Directive::MaxTokens => out.push_str("maxtokens"),
            Directive::Thinking => out.push_str("thinking"),
            Directive::Empty => out.push_str("empty"),
            Directive::Tool(None) => out.push_str("tool"),
            Directive::Tool(Some(c)) => {
                out.push_str("tool: ");
                out.push_str(&c.0);
            }
            Directive::Error500 => out.push_str("error500"),
            Directive::Error400 => out.push_str("error400"),
            Directive::SseError => out.push_str("sseerror"),
            Directive::Truncate => out.push_str("truncate"),
            Directive::Hang => out.push_str("hang"),
            Directive::Slow(n, inner) => {
                out.push_str(&format!("slow:{}.{} ", n / 10, n % 10));
                inner.render(depth + 1, out);
            }
            Directive::Subagent(inner) => {
                out.push_str("subagent: ");
                inner.render(depth + 1, out);
            }
        }
    }
}

impl PathGen {
    fn put(&self, key: &str, p: &mut Map<String, Value>) {
        let v: Value = match self {
            PathGen::Root => "/".into(),
            PathGen::Tmp => "/tmp".into(),
            PathGen::Dot => ".".into(),
            PathGen::DotDot => "..".into(),
            PathGen::Empty => "".into(),
            PathGen::Missing => "/nonexistent/dsh-fuzz".into(),
            PathGen::Any(s) => s.0.clone().into(),
            PathGen::NotString(v) => v.value(0),
            PathGen::Absent => return,
        };
        p.insert(key.into(), v);
    }
}

impl NumGen {
    fn value(&self) -> Value {
        match self {
            NumGen::Small(n) => (*n).into(),
            NumGen::Zero => 0.into(),
            NumGen::Neg => (-1).into(),
            NumGen::Frac => json::number_value(1.5),
            NumGen::MaxSafe => 9_007_199_254_740_991i64.into(),
            NumGen::Unsafe => 9_007_199_254_740_992i64.into(),
            NumGen::Str => "5".into(),
            NumGen::Null => Value::Null,
        }
    }
}

impl MethodGen {
    fn name(&self) -> String {
        match self {
            MethodGen::Known(k) => match k {
                KnownMethod::Initialize => "initialize",
                KnownMethod::Prompt => "session/prompt",
                KnownMethod::Resume => "session/resume",
                KnownMethod::Wait => "session/wait",
                KnownMethod::WdGet => "session/working-directory/get",
                KnownMethod::WdSet => "session/working-directory/set",
                KnownMethod::Shutdown => "shutdown",
                KnownMethod::Cancel => "session/cancel",
                KnownMethod::CaseMiss => "Initialize",
                KnownMethod::Empty => "",
                KnownMethod::Trailing => "session/prompt ",
            }
            .into(),
            MethodGen::Any(s) => s.0.clone(),
        }
    }
}

impl ValGen {
    /// The JSON value (nesting past the limit becomes `null`).
    pub fn value(&self, depth: usize) -> Value {
        if depth > MAX_NEST {
            return Value::Null;
        }
        match self {
            ValGen::Null => Value::Null,
            ValGen::Bool(b) => Value::Bool(*b),
            ValGen::Int(i) => (*i).into(),
            ValGen::Float(f) => json::number_value(*f),
            ValGen::Str(s) => s.0.clone().into(),
            ValGen::Arr(a) => Value::Array(a.iter().map(|v| v.value(depth + 1)).collect()),
            ValGen::Obj(m) => {
                let mut o = Map::new();
                for (k, v) in m {
                    let k = match k {
                        KeyGen::SessionId => "sessionId".to_owned(),
                        KeyGen::ContentBlocks => "contentBlocks".to_owned(),
                        KeyGen::Cwd => "cwd".to_owned(),
                        KeyGen::Path => "path".to_owned(),
                        KeyGen::Type => "type".to_owned(),
                        KeyGen::Text => "text".to_owned(),
                        KeyGen::MaxTokens => "maxTokens".to_owned(),
                        KeyGen::Any(s) => s.0.clone(),
                    };
                    o.insert(k, v.value(depth + 1));
                }
                Value::Object(o)
            }
        }
    }
}
