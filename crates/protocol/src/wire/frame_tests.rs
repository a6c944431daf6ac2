//! Tests of [`super`]: classification, ids, params, responses.

use super::*;
use serde_json::json;

fn req(line: &str) -> Request {
    match classify(line) {
        Classified::Request(r) => r,
        other => panic!("{line}: expected a request, got {other:?}"),
    }
}

#[test]
fn id_and_string_method_make_a_request_whatever_jsonrpc_says() {
    for l in [
        r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
        r#"{"id":1,"method":"m"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
        r#"{"jsonrpc":2,"id":1,"method":"m","result":5}"#,
    ] {
        assert_eq!(req(l).method, "m");
    }
    assert_eq!(req(r#"{"id":"","method":""}"#).id, Id::Str(String::new()));
}

#[test]
fn numeric_ids_echo_as_javascript_doubles() {
    for (sent, echoed) in [
        ("1", "1"),
        ("1.5", "1.5"),
        ("1e3", "1000"),
        ("1.0", "1"),
        ("-0", "0"),
        ("-7", "-7"),
        ("0", "0"),
        ("9007199254740993", "9007199254740992"),
        ("12345678901234567890", "12345678901234567000"),
        ("123456789012345678901234567890", "1.2345678901234568e+29"),
        ("1e400", "null"),
    ] {
        let r = req(&format!(r#"{{"id":{sent},"method":"m"}}"#));
        assert_eq!(r.id.to_json(), echoed, "id {sent}");
    }
}

#[test]
fn ids_that_are_not_string_or_number_make_a_notification_or_nothing() {
    for id in ["null", "true", "{\"a\":1}", "[1]"] {
        match classify(&format!(r#"{{"id":{id},"method":"m"}}"#)) {
            Classified::Notification(n) => assert_ne!(n.id_kind, Kind::Absent),
            other => panic!("id {id}: {other:?}"),
        }
        assert!(matches!(
            classify(&format!(r#"{{"id":{id}}}"#)),
            Classified::Ignored(Ignored::NoIdNoMethod { .. })
        ));
    }
}

#[test]
fn a_non_string_method_with_an_id_is_a_response() {
    for m in ["5", "null", "{}"] {
        match classify(&format!(r#"{{"id":1,"method":{m}}}"#)) {
            Classified::Response(r) => assert_ne!(r.method_kind, Kind::String),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn duplicate_keys_last_one_wins() {
    assert_eq!(
        req(r#"{"id":"dup","id":"dup2","method":"m"}"#).id,
        Id::from("dup2")
    );
    assert_eq!(
        req(r#"{"id":1,"method":"initialize","method":"probe/dup"}"#).method,
        "probe/dup"
    );
    assert!(matches!(
        classify(r#"{"id":4,"method":"m","id":null}"#),
        Classified::Notification(_)
    ));
}

#[test]
fn params_that_are_not_an_object_become_empty_but_their_shape_is_kept() {
    for (p, shape) in [
        ("", Kind::Absent),
        (r#","params":null"#, Kind::Null),
        (r#","params":[1,2]"#, Kind::Array),
        (r#","params":"s""#, Kind::String),
        (r#","params":5"#, Kind::Number),
        (r#","params":true"#, Kind::Bool),
    ] {
        let r = req(&format!(r#"{{"id":1,"method":"m"{p}}}"#));
        assert_eq!(r.params.shape, shape);
        assert!(r.params.object().is_empty());
    }
    let r = req(r#"{"id":1,"method":"m","params":{"a":[1]}}"#);
    assert_eq!(r.params.get("a"), Some(&json!([1])));
}

#[test]
fn non_objects_batches_and_malformed_lines_are_ignored_with_a_reason() {
    assert!(matches!(
        classify("42"),
        Classified::Ignored(Ignored::NotAnObject(Kind::Number))
    ));
    assert!(matches!(
        classify("null"),
        Classified::Ignored(Ignored::NotAnObject(Kind::Null))
    ));
    assert!(matches!(
        classify("[]"),
        Classified::Ignored(Ignored::Batch { len: 0 })
    ));
    assert!(matches!(
        classify(r#"[{"id":5,"method":"probe/x"}]"#),
        Classified::Ignored(Ignored::Batch { len: 1 })
    ));
    assert!(matches!(
        classify("{not json"),
        Classified::Ignored(Ignored::Malformed(_))
    ));
    assert!(matches!(
        classify("A\rB"),
        Classified::Ignored(Ignored::Malformed(_))
    ));
    assert!(matches!(classify(""), Classified::Ignored(Ignored::Blank)));
}

#[test]
fn error_members_reject_only_when_they_are_objects_or_arrays() {
    let out = |l: &str| match classify(l) {
        Classified::Response(r) => r.outcome,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        out(r#"{"id":1,"error":{"code":7,"message":"structured","data":{"detail":"x"}}}"#),
        Outcome::Error(ErrorObject {
            code: Some(7.0),
            message: "structured".into(),
            data: Some(json!({"detail":"x"}).into())
        })
    );
    assert_eq!(
        out(r#"{"id":1,"error":{}}"#),
        Outcome::Error(ErrorObject {
            code: None,
            message: "JSON-RPC error".into(),
            data: None
        })
    );
    assert!(matches!(out(r#"{"id":1,"error":[1]}"#), Outcome::Error(_)));
    assert_eq!(out(r#"{"id":1,"error":null}"#), Outcome::Result(None));
    assert_eq!(
        out(r#"{"id":1,"error":"x","result":2}"#),
        Outcome::Result(Some(json!(2).into()))
    );
}

#[test]
fn ids_compare_as_a_javascript_map_does() {
    assert_ne!(Id::from("1"), Id::from(1));
    assert_eq!(Id::Num(-0.0), Id::Num(0.0));
    assert_eq!(Id::from(7).to_string(), "7");
    assert_eq!(Id::from("7").to_string(), "\"7\"");
}

#[test]
fn deeply_nested_params_are_classified_and_dropped_safely() {
    let n = 100_000;
    let line = format!(
        r#"{{"id":1,"method":"m","params":{{"a":{}{}}}}}"#,
        "[".repeat(n),
        "]".repeat(n)
    );
    let r = req(&line);
    assert_eq!(r.params.shape, Kind::Object);
    drop(r);
    let bare = format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(matches!(
        classify(&bare),
        Classified::Ignored(Ignored::Batch { len: 1 })
    ));
    // A response's result and its error's data are held safely too.
    let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let outcome = |l: &str| match classify(l) {
        Classified::Response(r) => r.outcome,
        other => panic!("{}", other.class_name()),
    };
    let result = outcome(&format!(r#"{{"id":1,"result":{deep}}}"#));
    assert!(matches!(result, Outcome::Result(Some(_))));
    let error = outcome(&format!(r#"{{"id":1,"error":{{"code":1,"data":{deep}}}}}"#));
    assert!(matches!(
        error,
        Outcome::Error(ErrorObject { data: Some(_), .. })
    ));
}
