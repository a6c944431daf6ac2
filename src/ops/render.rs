//! Ops as wire bytes: requests, notifications, responses and raw text, exactly as a client (or a
//! hostile peer) would write them.

use super::*;
use crate::wire::json::{self, write_str};
use serde_json::{Map, Value};

/// Renders ops to bytes; remembers the last id for [`IdGen::Again`].
#[derive(Debug, Default)]
pub struct Renderer {
    last_id: Option<String>,
    counter: u64,
    session_prefix: String,
}

impl Renderer {
    /// A renderer that writes [`SessionGen::Pick`] and [`SessionGen::Any`] session ids under
    /// `prefix` (`<prefix>s<N>`, `<prefix><text>`): sequences sharing one runtime process then
    /// meet on sessions of their own. The special ids (empty, path-like) stay as they are.
    pub fn with_session_prefix(prefix: &str) -> Renderer {
        Renderer {
            session_prefix: prefix.to_owned(),
            ..Renderer::default()
        }
    }

    /// Appends the bytes of one op (nothing for [`Op::Advance`], [`Op::Eof`] and [`Op::Restart`]).
    pub fn render(&mut self, op: &Op, out: &mut Vec<u8>) {
        match op {
            Op::Prompt {
                id,
                session,
                blocks,
            } => {
                let mut p = Map::new();
                session.put(&self.session_prefix, &mut p);
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
                session.put(&self.session_prefix, &mut p);
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
        s.put(&self.session_prefix, &mut p);
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
    fn put(&self, prefix: &str, p: &mut Map<String, Value>) {
        let v: Value = match self {
            SessionGen::Pick(n) => format!("{prefix}s{}", n % 3).into(),
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
            SessionGen::Any(s) => format!("{prefix}{}", s.0).into(),
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
                m.insert("text".into(), d.to_string().into());
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
