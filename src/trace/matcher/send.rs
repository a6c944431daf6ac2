//! Writing sends: `{{cwd}}`, `{{home}}` and captured `{{$name}}` substituted, or a harness
//! failure when a send uses a capture no frame has bound.

use super::{Action, Matcher};
use crate::trace::failure::{Failure, FailureKind};
use serde_json::Value;

impl Matcher {
    pub(super) fn send_error(&mut self, line: usize, name: &str) -> Action {
        self.fail(Failure {
            trace_line: Some(line),
            ..Failure::new(
                FailureKind::Harness,
                format!(
                    "the send at {} uses {{{{${name}}}}}, which no frame has bound yet",
                    self.at(line)
                ),
            )
        });
        Action::Done
    }

    /// Replaces `{{cwd}}`, `{{home}}` and bound `{{$name}}` in a send. In a frame, a string that
    /// is exactly `"{{$name}}"` becomes the captured JSON value; elsewhere values are inserted as
    /// string contents (JSON-escaped inside frames).
    pub(super) fn substitute(&self, src: &[u8], json: bool) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(src.len());
        let mut i = 0;
        while i < src.len() {
            let Some(off) = memchr::memmem::find(&src[i..], b"{{") else {
                out.extend_from_slice(&src[i..]);
                break;
            };
            let start = i + off;
            let Some(end_off) = memchr::memmem::find(&src[start + 2..], b"}}") else {
                out.extend_from_slice(&src[i..]);
                break;
            };
            let body = &src[start + 2..start + 2 + end_off];
            let end = start + 2 + end_off + 2;
            let text: Option<Vec<u8>> = match body {
                b"cwd" => Some(self.env.cwd.as_bytes().to_vec()),
                b"home" => Some(self.env.home.as_bytes().to_vec()),
                _ if body.first() == Some(&b'$') => {
                    let name = String::from_utf8_lossy(&body[1..]).into_owned();
                    let name = name.split(':').next().unwrap_or("").to_owned();
                    let v = self.bindings.vars.get(&name).ok_or(name.clone())?;
                    let whole =
                        json && start > 0 && src[start - 1] == b'"' && src.get(end) == Some(&b'"');
                    if whole {
                        out.extend_from_slice(&src[i..start - 1]);
                        crate::wire::json::write_value(v, &mut out);
                        i = end + 1;
                        continue;
                    }
                    Some(match v {
                        Value::String(s) => s.as_bytes().to_vec(),
                        o => crate::wire::json::to_string(o).into_bytes(),
                    })
                }
                _ => None,
            };
            match text {
                Some(t) => {
                    out.extend_from_slice(&src[i..start]);
                    if json {
                        let mut q = Vec::new();
                        crate::wire::json::write_str(&String::from_utf8_lossy(&t), &mut q);
                        out.extend_from_slice(&q[1..q.len() - 1]);
                    } else {
                        out.extend_from_slice(&t);
                    }
                }
                None => out.extend_from_slice(&src[i..end]),
            }
            i = end;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn captures_flow_into_later_sends_as_values() {
        let mut x = m(">> {\"id\":1,\"method\":\"a\"}\n<< {\"id\":1,\"result\":{\"n\":\"{{$n}}\",\"s\":\"{{$s}}\"}}\n>> {\"id\":2,\"method\":\"b\",\"params\":{\"n\":\"{{$n}}\",\"t\":\"x{{$s}}y {{cwd}}\"}}\n<< {\"id\":2}\n");
        drain(&mut x, T);
        feed(
            &mut x,
            &["{\"id\":1,\"result\":{\"n\":42,\"s\":\"q\\\"\"}}"],
        );
        let (w, _) = drain(&mut x, T);
        assert_eq!(
            w,
            vec!["{\"id\":2,\"method\":\"b\",\"params\":{\"n\":42,\"t\":\"xq\\\"y /c\"}}\n"]
        );
    }
}
