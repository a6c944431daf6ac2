//! The fuzz targets' invariants as proptest properties, with small case counts so that plain
//! `cargo test` exercises them on every run (the fuzzers go much further).

use dsh_conformance_fuzzing::{classify_line, line_stream, runtime_session, trace_parse};
use proptest::prelude::*;

/// A JSON string literal mixing plain text, escapes (lone surrogates included), raw non-ASCII and
/// the characters held text reserves for lone surrogates (raw and as escaped pairs).
fn string_lit() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z/ ._-]{0,6}",
        prop::sample::select(vec![
            "\\ud800",
            "\\udc00",
            "\\udbff",
            "\\udfff",
            "\\ud801",
            "\u{10F800}",
            "\u{10F7FF}",
            "\u{10FFFF}",
            "\\udbfe\\udc00",
            "\\udbfd\\udfff",
            "\\ud83d\\ude00",
            "\\u0000",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "€",
            "\u{2028}",
            "\u{feff}",
            "\u{1F600}",
            "\\u0069d",
        ])
        .prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|p| format!("\"{}\"", p.concat()))
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "\"id\"", "\"method\"", "\"params\"", "\"result\"", "\"error\"", "\"code\"",
            "\"message\"", "\"data\"", "\"jsonrpc\"",
        ])
        .prop_map(String::from),
        1 => string_lit(),
    ]
}

/// JSON text (valid by construction), with the number spellings JavaScript treats specially.
fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        prop::sample::select(vec![
            "null",
            "true",
            "false",
            "0",
            "-0",
            "1.5",
            "1e400",
            "-1e400",
            "12345678901234567890",
            "9007199254740993",
            "1e21",
            "1E-7",
            "0.000001",
            "\"2.0\"",
        ])
        .prop_map(String::from),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        string_lit(),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key(), inner), 0..5).prop_map(|m| {
                let members: Vec<String> = m.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

/// One line as a peer might send it: a frame-like object, any JSON, or a broken prefix of one,
/// with JavaScript whitespace around it.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let body = prop_oneof![
        3 => (json_text(), json_text(), json_text()).prop_map(|(id, m, p)| {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":{m},\"params\":{p}}}")
        }),
        2 => json_text(),
        1 => (json_text(), any::<prop::sample::Index>()).prop_map(|(t, i)| {
            let cut = i.index(t.len() + 1);
            let cut = (0..=cut).rev().find(|c| t.is_char_boundary(*c)).unwrap_or(0);
            t[..cut].to_owned()
        }),
    ];
    let space = prop::sample::select(vec![
        "", "", " ", "\t", "\r", "\u{feff}", "\u{a0}", "\u{2029}",
    ]);
    (space.clone(), body, space).prop_map(|(a, b, c)| format!("{a}{b}{c}").into_bytes())
}

/// A stream of lines joined by `\n` or `\r\n`, sometimes with raw invalid UTF-8 and no final newline.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let sep = prop::sample::select(vec![&b"\n"[..], b"\r\n", b"\n\n", b"\r"]);
    (
        prop::collection::vec((line(), sep), 0..5),
        prop::collection::vec(any::<u8>(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(lines, junk, terminated)| {
            let mut out = Vec::new();
            for (l, s) in lines {
                out.extend_from_slice(&l);
                out.extend_from_slice(s);
            }
            out.extend_from_slice(&junk);
            if terminated {
                out.push(b'\n');
            }
            out
        })
}

/// A string holding trace placeholders, some of them odd.
fn placeholder_str() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "{{any}}",
        "{{string}}",
        "{{uuid}}",
        "{{$m}}",
        "{{$m:uuid}}",
        "{{-32601|-32603}}",
        "{{\\\"1\\\"|2}}",
        "{{absent}}",
        "{{seq}}",
        "{{cwd}}",
        "{{...}}",
        "{{",
        "}}",
        "x",
        "|",
    ]);
    prop::collection::vec(piece, 1..4).prop_map(|p| format!("\"{}\"", p.concat()))
}

/// Text shaped like a golden trace: directives, frames with placeholders, metadata, junk.
fn trace_text() -> impl Strategy<Value = String> {
    let head = prop::sample::select(vec![
        ">> ",
        "<< ",
        "<<exact ",
        "<<? ",
        "<<* ",
        ">>raw ",
        ">>eof",
        "== exit 0",
        "== exit 0 within 5s",
        "# case: c",
        "# editions: current",
        "ignore ",
        "{",
        "}",
        "",
        "within 2s ",
    ]);
    let body = prop_oneof![
        json_text(),
        (key(), placeholder_str()).prop_map(|(k, v)| format!("{{{k}:{v}}}")),
        placeholder_str(),
        "[ -~]{0,12}",
    ];
    prop::collection::vec((head, body), 0..8).prop_map(|lines| {
        lines
            .into_iter()
            .map(|(h, b)| format!("{h}{b}\n"))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn classification_agrees_with_the_independent_model(data in stream()) {
        if let Err(e) = classify_line::check_stream(&data) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn classification_never_panics_on_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Err(e) = classify_line::check(&data) {
            prop_assert!(false, "{}", e);
        }
        if let Err(e) = classify_line::check_stream(&data) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn chunking_never_changes_the_lines(
        data in stream(),
        bound in prop::option::of(0u8..128),
        cuts in prop::collection::vec(any::<u8>(), 0..8),
    ) {
        let input = line_stream::encode(bound, &cuts, &data);
        if let Err(e) = line_stream::check(&input) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn random_op_sequences_keep_the_runtime_invariants(data in prop::collection::vec(any::<u8>(), 0..3000)) {
        if let Err(e) = runtime_session::check(&data) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn trace_parsing_never_panics_and_patterns_print_back(text in trace_text()) {
        if let Err(e) = trace_parse::check(text.as_bytes()) {
            prop_assert!(false, "{}", e);
        }
    }
}
