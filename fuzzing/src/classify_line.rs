//! Fuzz target `classify_line`: one line through the classifier, checked against the independent
//! model in [`super::oracle`], plus the JSON writer's round trips and the frame writers' echoes.
//!
//! The input is one line: its bytes decoded as the splitter decodes them (invalid UTF-8 becomes
//! U+FFFD) and classified as they are, untrimmed, so JSON and JavaScript whitespace at the ends
//! reach the parser too. Classification is stateless, so a stream of lines is that many
//! independent lines: [`check_stream`] runs a whole stream through the splitter and every line
//! through [`check_line`] (the property tests feed it generated streams), while the splitter has its
//! own target, `line_stream`. One line per execution keeps the fuzzer's inputs at the size of the
//! work it explores (an input of many lines cost as many executions' work and bought nothing a
//! line could not).
//!
//! Strings must agree exactly: the wire's held text ([`json::held`]) must be the held text of the
//! model's UTF-16 string, lone surrogates included, and the writer must write what the model's
//! `JSON.stringify` writes. The wire layer's one documented difference from JavaScript is applied
//! to the model's side when comparing, and nowhere else: a number literal too large for a double
//! (`1e400`, JavaScript `Infinity`) is held as `null`, so diagnostics that report a member's kind
//! say "null" and a non-finite error `code` reads as absent (the request id keeps its real value:
//! `Parsed::top_id_number`).

use super::line_stream::Recorded;
use super::oracle::{self, JKind, LineRef, MId, Model, J};
use dsh_conformance::wire::json::{self, JsonView};
use dsh_conformance::wire::{
    classify, classify_parsed, codes::ErrorCode, envelope, lines::DEFAULT_MAX_LINE, write,
    Classified, Envelope, Id, Ignored, Kind, LineDecoder, Outcome,
};
use serde_json::{Map, Value};

/// Values nested deeper than this skip the checks that use `serde_json`'s recursive `Clone`/`Eq`.
const RECURSIVE_OK: usize = 256;

/// Runs every check; panics with a description on the first disagreement (the fuzz entry point).
pub fn run(data: &[u8]) {
    if let Err(e) = check(data) {
        panic!("classify_line: {e}");
    }
}

/// Runs every check on one input: the input is one line (see the module docs).
pub fn check(data: &[u8]) -> Result<(), String> {
    check_line(&dsh_conformance::wire::lines::decode(data))
}

/// Runs a whole stream through the splitter (compared with the model's) and every line it yields
/// through [`check_line`]; then the whole stream, taken as one untrimmed line, is classified and
/// compared with the model.
pub fn check_stream(data: &[u8]) -> Result<(), String> {
    // 1. The splitter against the model, feeding the input whole.
    let mut got = Recorded::default();
    let mut d = LineDecoder::default();
    d.push(data, &mut |e| super::line_stream::record(&mut got, e));
    got.tail = d.finish().map(|t| (t.len, t.blank));
    if !got.agrees_with_model(data, DEFAULT_MAX_LINE) {
        let (want, want_tail) = oracle::split_lines(data, DEFAULT_MAX_LINE);
        return Err(format!(
            "lines differ from the model:\n  wire  {:?} tail {:?}\n  model {want:?} tail {want_tail:?}",
            got.to_models(),
            got.tail
        ));
    }
    // 2. Every line, and the whole input taken as one untrimmed line.
    for l in got.iter() {
        if let LineRef::Line(l) = l {
            check_line(l)?;
        }
    }
    // Most inputs are one line and its `\n`: the whole input is then that line padded with JSON
    // whitespace, which parses to the same value, so the writer checks (which see only the value)
    // were done on the line. Its classification is still compared with the model.
    let whole = String::from_utf8_lossy(data);
    let core = whole.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    let padded_line = got.iter().any(|l| l == LineRef::Line(core));
    check_line_with(&whole, !padded_line)
}

/// Classifies one line with the wire layer and with the model and compares; then checks the JSON
/// writer and the frame writers on what was parsed.
///
/// The wire parses the line once: the writer checks read the parsed value before
/// [`classify_parsed`] consumes it (`classify` is `classify_parsed` after the same parse).
pub fn check_line(line: &str) -> Result<(), String> {
    check_line_with(line, true)
}

/// [`check_line`], with the writer and frame-echo checks only when `writer_checks`.
fn check_line_with(line: &str, writer_checks: bool) -> Result<(), String> {
    // The model parses once: `handleLine` and the writer checks share the value.
    let message = oracle::json_parse(line);
    let m = oracle::handle_parsed(line, message.as_ref());
    let (c, writer, shallow) = if line.is_empty() {
        (classify(line), Ok(()), false)
    } else {
        match json::parse(line) {
            Ok(parsed) if !writer_checks => (classify_parsed(parsed), Ok(()), false),
            Ok(parsed) => {
                let shallow = parsed.depth <= RECURSIVE_OK;
                let writer = writer_round_trips(line, &parsed.value, message.as_ref(), shallow);
                (classify_parsed(parsed), writer, shallow)
            }
            Err(e) => (Classified::Ignored(Ignored::Malformed(e)), Ok(()), false),
        }
    };
    agree(&c, &m).map_err(|e| format!("{e}\n  line {line:?}\n  wire {c:?}\n  model {m:?}"))?;
    same_envelope(line, &c).map_err(|e| format!("{e}\n  line {line:?}\n  classify {c:?}"))?;
    writer.map_err(|e| format!("{e}\n  line {line:?}"))?;
    if shallow {
        frame_echoes(&c, &m).map_err(|e| format!("{e}\n  line {line:?}"))?;
    }
    Ok(())
}

/// [`envelope`] (the tape classification of the runtime's fast path and the rule checker) says
/// what `classify` says: the class, the id, the method, the params' session and the kinds.
fn same_envelope(line: &str, c: &Classified) -> Result<(), String> {
    let mut tape = json::Tape::default();
    let e = envelope(&mut tape, line);
    let same = match (&e, c) {
        (Envelope::Request { id, method, params }, Classified::Request(r)) => {
            let session = params
                .and_then(|p| p.get("sessionId"))
                .and_then(JsonView::as_str);
            id.to_json() == r.id.to_json()
                && *method == r.method
                && session == r.params.get("sessionId").and_then(Value::as_str)
        }
        (Envelope::Response { method_kind }, Classified::Response(r)) => {
            *method_kind == r.method_kind
        }
        (Envelope::Notification { id_kind }, Classified::Notification(n)) => *id_kind == n.id_kind,
        (Envelope::Ignored(Ignored::Malformed(_)), Classified::Ignored(Ignored::Malformed(_))) => {
            true
        }
        (Envelope::Ignored(a), Classified::Ignored(b)) => a == b,
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!("the envelope differs from classify: {e:?}"))
    }
}

/// `JSON.stringify` of a parsed value equals the model's, parses back to the same value, and is a
/// fixed point. When the written text is the line itself, parsing it back is the parse already
/// done, so the round trip holds without redoing it.
fn writer_round_trips(
    line: &str,
    v: &Value,
    model: Option<&J>,
    shallow: bool,
) -> Result<(), String> {
    let text = json::to_string(v);
    let Some(model) = model else {
        return Err("the wire parsed a line the model rejects".into());
    };
    if let Some(want) = oracle::stringify(model) {
        if text != want {
            return Err(format!(
                "JSON.stringify differs:\n  wire  {text}\n  model {want}"
            ));
        }
    }
    if text == line {
        return Ok(());
    }
    let back =
        json::parse(&text).map_err(|e| format!("written JSON does not parse ({e}): {text}"))?;
    let back = json::Deep::new(back.value);
    let again = json::to_string(&back);
    let same = !shallow || *back == *v;
    if !same {
        return Err(format!("written JSON parses to a different value: {text}"));
    }
    if again != text {
        return Err(format!(
            "writing is not a fixed point:\n  once  {text}\n  twice {again}"
        ));
    }
    Ok(())
}

/// The frames written for a request (its result, its internal error, a notification carrying its
/// method and params) are the bytes the model's `JSON.stringify` writes for those frame objects;
/// when the model holds the params only as "too deep", they classify back to what was written.
fn frame_echoes(c: &Classified, m: &Model) -> Result<(), String> {
    let Classified::Request(r) = c else {
        return Ok(());
    };
    let params = Value::Object(r.params.object().clone());
    if let Model::Request {
        id,
        method,
        params: model_params,
        ..
    } = m
    {
        if let Some(want) = model_frames(id, method, model_params) {
            let mut out = Vec::new();
            write::result(&mut out, &r.id, &params);
            write::error(&mut out, &r.id, ErrorCode::INTERNAL_ERROR, &r.method);
            write::notification(&mut out, &r.method, Some(&params));
            if out != want.as_bytes() {
                return Err(format!(
                    "frames differ from the model's JSON.stringify:\n  wire  {}\n  model {want}",
                    String::from_utf8_lossy(&out)
                ));
            }
            return Ok(());
        }
    }
    let reclassify = |out: &[u8]| -> Result<Classified, String> {
        let text = std::str::from_utf8(out).map_err(|e| format!("frame is not UTF-8: {e}"))?;
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| format!("frame does not end with a newline: {text:?}"))?;
        if body.contains('\n') {
            return Err(format!("frame spans lines: {text:?}"));
        }
        Ok(classify(body))
    };
    let echoable = !matches!(r.id, Id::Num(f) if !f.is_finite());

    let mut out = Vec::new();
    write::result(&mut out, &r.id, &params);
    match reclassify(&out)? {
        Classified::Response(resp) if echoable => {
            if resp.id != r.id || resp.outcome != Outcome::Result(Some(params.clone().into())) {
                return Err(format!("result frame echoes differently: {resp:?}"));
            }
        }
        // A non-finite id is written as `null`: the frame is then no response at all.
        Classified::Ignored(Ignored::NoIdNoMethod { id: Kind::Null, .. }) if !echoable => {}
        other => return Err(format!("result frame reclassified as {other:?}")),
    }

    out.clear();
    write::error(&mut out, &r.id, ErrorCode::INTERNAL_ERROR, &r.method);
    match reclassify(&out)? {
        Classified::Response(resp) if echoable => match &resp.outcome {
            Outcome::Error(e)
                if resp.id == r.id
                    && e.error_code() == Some(ErrorCode::INTERNAL_ERROR)
                    && e.message == r.method
                    && e.data.is_none() => {}
            _ => return Err(format!("error frame echoes differently: {resp:?}")),
        },
        Classified::Ignored(Ignored::NoIdNoMethod { id: Kind::Null, .. }) if !echoable => {}
        other => return Err(format!("error frame reclassified as {other:?}")),
    }

    out.clear();
    write::notification(&mut out, &r.method, Some(&params));
    match reclassify(&out)? {
        Classified::Notification(n)
            if n.method == r.method
                && n.id_kind == Kind::Absent
                && n.params.shape == Kind::Object
                && *n.params.object() == *r.params.object() => {}
        other => return Err(format!("notification frame reclassified as {other:?}")),
    }
    Ok(())
}

/// The three frames [`frame_echoes`] writes, as the model writes them: `JSON.stringify` of each
/// frame object, a newline after each; `None` when the params hold a value too deep for the model.
fn model_frames(id: &MId, method: &[u16], params: &J) -> Option<String> {
    let key = |k: &str| k.encode_utf16().collect::<Vec<u16>>();
    let id = match id {
        MId::Str(s) => J::Str(s.clone()),
        MId::Num(n) => J::Num(*n),
    };
    let jsonrpc = || (key("jsonrpc"), J::Str(key("2.0")));
    let code = ErrorCode::INTERNAL_ERROR.0 as f64;
    let frames = [
        J::Obj(vec![
            jsonrpc(),
            (key("id"), id.clone()),
            (key("result"), params.clone()),
        ]),
        J::Obj(vec![
            jsonrpc(),
            (key("id"), id),
            (
                key("error"),
                J::Obj(vec![
                    (key("code"), J::Num(code)),
                    (key("message"), J::Str(method.to_vec())),
                ]),
            ),
        ]),
        J::Obj(vec![
            jsonrpc(),
            (key("method"), J::Str(method.to_vec())),
            (key("params"), params.clone()),
        ]),
    ];
    let mut text = String::new();
    for f in &frames {
        text.push_str(&oracle::stringify(f)?);
        text.push('\n');
    }
    Some(text)
}

/// Whether the wire's held text `t` is exactly the held text of the model's string `s`.
fn eq16(s: &[u16], t: &str) -> bool {
    // ASCII text is held as itself, and any other unit (a lone surrogate included) would put a
    // non-ASCII character into the held text: compare unit by unit, with no `String` built.
    if t.is_ascii() {
        return s.len() == t.len() && s.iter().zip(t.bytes()).all(|(&u, b)| u == u16::from(b));
    }
    json::held::from_utf16(s) == t
}

/// The kind the wire reports for a member: non-finite numbers are held as `null`.
fn held_kind(j: Option<&J>) -> Kind {
    match j {
        None => Kind::Absent,
        Some(J::Num(n)) if !n.is_finite() => Kind::Null,
        Some(j) => match j.kind() {
            JKind::Absent => Kind::Absent,
            JKind::Null => Kind::Null,
            JKind::Bool => Kind::Bool,
            JKind::Number => Kind::Number,
            JKind::String => Kind::String,
            JKind::Array => Kind::Array,
            JKind::Object => Kind::Object,
        },
    }
}

/// Whether a model value equals a wire value.
pub fn same_value(j: &J, v: &Value) -> bool {
    match (j, v) {
        (J::Null, Value::Null) => true,
        (J::Bool(a), Value::Bool(b)) => a == b,
        (J::Num(n), Value::Null) => !n.is_finite(),
        (J::Num(n), Value::Number(m)) => m.as_f64() == Some(*n),
        (J::Str(s), Value::String(t)) => eq16(s, t),
        (J::Arr(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_value(x, y))
        }
        (J::Obj(m), Value::Object(o)) => same_map(m, o),
        (J::Deep(JKind::Array), Value::Array(_)) => true,
        (J::Deep(JKind::Object), Value::Object(_)) => true,
        _ => false,
    }
}

fn same_map(m: &[(Vec<u16>, J)], o: &Map<String, Value>) -> bool {
    m.len() == o.len()
        && m.iter()
            .zip(o)
            .all(|((k, x), (ok, y))| eq16(k, ok) && same_value(x, y))
}

fn same_id(m: &MId, id: &Id) -> bool {
    match (m, id) {
        (MId::Str(s), Id::Str(t)) => eq16(s, t),
        (MId::Num(a), Id::Num(b)) => a == b,
        _ => false,
    }
}

fn same_params(
    model: &J,
    sent: Option<&J>,
    p: &dsh_conformance::wire::Params,
) -> Result<(), String> {
    let shape = held_kind(sent);
    if p.shape != shape {
        return Err(format!("params shape: wire {} model {shape}", p.shape));
    }
    match model {
        J::Obj(m) if same_map(m, p.object()) => Ok(()),
        J::Deep(JKind::Object) => Ok(()),
        _ => Err("params differ".into()),
    }
}

/// Whether the wire's classification agrees with the model's.
fn agree(c: &Classified, m: &Model) -> Result<(), String> {
    let id_echo = |m: &MId, id: &Id| -> Result<(), String> {
        if !same_id(m, id) {
            return Err("ids differ".into());
        }
        let want = match m {
            MId::Str(s) => oracle::stringify(&J::Str(s.clone())).unwrap_or_default(),
            MId::Num(n) => oracle::number_to_string(*n),
        };
        if id.to_json() != want {
            return Err(format!("id echo: wire {} model {want}", id.to_json()));
        }
        Ok(())
    };
    match (c, m) {
        (Classified::Ignored(Ignored::Blank), Model::Malformed { blank: true }) => Ok(()),
        (Classified::Ignored(Ignored::Malformed(_)), Model::Malformed { blank: false }) => Ok(()),
        (Classified::Ignored(Ignored::NotAnObject(k)), Model::NotAnObject(j))
            if *k == held_kind(Some(j)) =>
        {
            Ok(())
        }
        (Classified::Ignored(Ignored::Batch { len }), Model::Batch(n)) if len == n => Ok(()),
        (
            Classified::Ignored(Ignored::NoIdNoMethod { id, method }),
            Model::Dropped { id: i, method: me },
        ) if *id == held_kind(i.as_ref()) && *method == held_kind(me.as_ref()) => Ok(()),
        (
            Classified::Request(r),
            Model::Request {
                id,
                method,
                params,
                params_sent,
            },
        ) => {
            id_echo(id, &r.id)?;
            if !eq16(method, &r.method) {
                return Err("methods differ".into());
            }
            same_params(params, params_sent.as_ref(), &r.params)
        }
        (
            Classified::Response(r),
            Model::Response {
                id,
                error,
                result,
                method,
            },
        ) => {
            id_echo(id, &r.id)?;
            if r.method_kind != held_kind(method.as_ref()) {
                return Err("method kinds differ".into());
            }
            match (&r.outcome, error) {
                (Outcome::Error(e), Some((code, message, data))) => {
                    let code = code.filter(|c| c.is_finite());
                    let message = message.as_ref().map_or_else(
                        || "JSON-RPC error".to_owned(),
                        |m| json::held::from_utf16(m),
                    );
                    let data_same = match (&e.data, data) {
                        (None, None) => true,
                        (Some(v), Some(j)) => same_value(j, v),
                        _ => false,
                    };
                    if e.code != code || e.message != message || !data_same {
                        return Err("error objects differ".into());
                    }
                    Ok(())
                }
                (Outcome::Result(v), None) => match (v, result) {
                    (None, None) => Ok(()),
                    (Some(v), Some(j)) if same_value(j, v) => Ok(()),
                    _ => Err("results differ".into()),
                },
                _ => Err("outcomes differ".into()),
            }
        }
        (
            Classified::Notification(n),
            Model::Notification {
                method,
                params,
                params_sent,
                id,
            },
        ) => {
            if !eq16(method, &n.method) {
                return Err("methods differ".into());
            }
            if n.id_kind != held_kind(id.as_ref()) {
                return Err(format!("id kinds: wire {} model {:?}", n.id_kind, id));
            }
            same_params(params, params_sent.as_ref(), &n.params)
        }
        _ => Err("classes differ".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_edge_lines_agree_with_the_model() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"."}}"#,
            r#"{"id":"","method":""}"#,
            r#"{"id":0,"method":"m","params":[1]}"#,
            r#"{"id":1e400,"method":"m"}"#,
            r#"{"id":12345678901234567890,"method":"m"}"#,
            r#"{"id":null,"method":"foo"}"#,
            r#"{"id":true}"#,
            r#"{"id":5,"method":5}"#,
            r#"{"id":"dup","id":"dup2","method":"m"}"#,
            r#"{"id":1,"error":[],"result":3}"#,
            r#"{"id":1,"error":{"code":1e400,"message":5}}"#,
            r#"{"method":1e400}"#,
            r#"{"\ud800":1,"\udbff":2}"#,
            r#"{"id":"\ud800","method":"probe/\ud800","params":{"\ud800":1,"\ud801":2}}"#,
            r#"{"id":"a\udfffb","method":"probe/\udbff\ud800z"}"#,
            "{\"id\":\"\u{10F800}\\ud800\",\"method\":\"\u{10F7FF}\"}",
            r#"{"id":"\udbfe\udc00","result":{"\udc00":"\ud800"}}"#,
            r#"{"id":1,"error":{"code":1,"message":"\ud800","data":"\udfff"}}"#,
            r#"{"id":"\ud83d\ude00\ud800","method":"\u0000"}"#,
            "1e400",
            "[]",
            "[{\"id\":1,\"method\":\"m\"}]",
            "A\rB",
            "",
            " ",
        ] {
            check_line(line).unwrap();
        }
    }

    #[test]
    fn the_model_writes_the_three_echo_frames_as_the_wire_must() {
        let line = r#"{"id":"\ud800","method":"m\"","params":{"a":[1e400,1.50]}}"#;
        let j = oracle::json_parse(line);
        let Model::Request {
            id, method, params, ..
        } = oracle::handle_parsed(line, j.as_ref())
        else {
            panic!("a request");
        };
        assert_eq!(
            model_frames(&id, &method, &params).unwrap(),
            concat!(
                r#"{"jsonrpc":"2.0","id":"\ud800","result":{"a":[null,1.5]}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":"\ud800","error":{"code":-32603,"message":"m\""}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"m\"","params":{"a":[null,1.5]}}"#,
                "\n"
            )
        );
        check_line(line).unwrap();
    }

    #[test]
    fn held_text_comparison_tells_strings_apart() {
        let u = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        assert!(eq16(&u("abc"), "abc"));
        assert!(eq16(&u(""), ""));
        assert!(!eq16(&u("abc"), "abd"));
        assert!(!eq16(&u("ab"), "abc"));
        assert!(!eq16(&u("abé"), "abe"));
        assert!(eq16(&u("é€😀"), "é€😀"));
        // A lone surrogate is held as a reserved character, never as ASCII text.
        let lone = json::held::from_utf16(&[0xd800]);
        assert!(eq16(&[0xd800], &lone));
        assert!(!eq16(&[0xd800], "?"));
        assert!(!eq16(&[0xd800], "\u{fffd}"));
    }

    #[test]
    fn byte_level_edges_agree_with_the_model() {
        for data in [
            &b"\xef\xbb\xbf{\"id\":1,\"method\":\"m\"}\r\n"[..],
            b"{\"id\":\"\xe2\x82\xac\",\"method\":\"m\"}\n\xff\xfe\n{\"id\":2",
            b"\n\n  \t\n\xc2\xa0\n",
        ] {
            check_stream(data).unwrap();
            // The same bytes as one line: whitespace, a BOM and invalid UTF-8 at its ends.
            check(data).unwrap();
        }
    }
}
