use super::*;
use crate::blackbox::gen::generate_for;
use std::collections::BTreeSet;

/// The (tool, kind) pairs the calls of `seqs` sequences of profile `p` make.
fn seen(p: Profile, seqs: u64) -> BTreeSet<(String, Kind)> {
    let mut out = BTreeSet::new();
    for case in 0..seqs {
        let mut rng = Rng::new(case);
        let mut ws = Workspace::default();
        for _ in 0..8 {
            let c = any_call(&offered(p), &mut rng, &mut ws);
            out.insert((c.tool, c.kind));
        }
    }
    out
}

/// The tools the fuzzer calls with invalid inputs only (see `inputs.rs`).
const NO_VALID_CALL: [&str; 2] = ["web_search", "workflow"];

#[test]
fn every_offered_tool_is_called_with_valid_and_invalid_inputs_in_both_profiles() {
    for p in [Profile::Sdk, Profile::SdkMinimal] {
        let tools = offered(p);
        assert!(tools.contains(&"bash".to_owned()), "{p:?}: {tools:?}");
        let seen = seen(p, 400);
        for t in &tools {
            let kinds: BTreeSet<Kind> = seen.iter().filter(|s| &s.0 == t).map(|s| s.1).collect();
            // Invalid inputs only: `web_search` leaves the machine when valid, and the reference
            // does not run valid calls of the other three.
            if !NO_VALID_CALL.contains(&t.as_str()) {
                assert!(kinds.contains(&Kind::Valid), "{p:?} {t}: {kinds:?}");
            }
            assert!(
                kinds.iter().any(|k| *k != Kind::Valid),
                "{p:?} {t}: {kinds:?}"
            );
        }
        assert!(seen
            .iter()
            .any(|s| s.1 == Kind::Unoffered && !tools.contains(&s.0)));
    }
    // The rosters are the reference's: sdk-minimal offers three tools, sdk its 25.
    assert_eq!(
        offered(Profile::SdkMinimal),
        ["bash", "read_image", "working_directory"]
    );
    assert_eq!(offered(Profile::Sdk).len(), 25);
}

#[test]
fn invalid_inputs_break_the_schema_and_writes_stay_in_the_workspace() {
    let mut rng = Rng::new(3);
    let mut ws = Workspace::default();
    let input = |c: &Call| match &c.directive {
        Directive::Call { input, .. } | Directive::CallAny { input, .. } => input.clone(),
        d => panic!("{d:?}"),
    };
    for _ in 0..2000 {
        let c = any_call(&offered(Profile::Sdk), &mut rng, &mut ws);
        let text = input(&c);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Tools whose schema declares properties (`job_list` and `get_goal` take any object).
        let files = crate::runtime::files::schema::of(&c.tool)
            .is_some_and(|s| s["properties"].as_object().is_some_and(|p| !p.is_empty()));
        match c.kind {
            Kind::Missing | Kind::WrongType if files => {
                assert!(
                    crate::runtime::files::schema::check(&c.tool, &v).is_err(),
                    "{text}"
                )
            }
            _ => {}
        }
        // Writers and walkers name the workspace absolutely.
        if c.kind != Kind::Outside && ["write", "glob", "grep", "bash"].contains(&c.tool.as_str()) {
            if let Some(s) = ["file_path", "path", "command"]
                .iter()
                .find_map(|k| v[k].as_str())
            {
                assert!(s.contains(CWD_PLACEHOLDER), "{text}");
            }
        }
        assert!(
            !text.contains("sleep 1") && !text.contains("http://")
                || text.contains("127.0.0.1")
                || text.contains("localhost"),
            "{text}"
        );
    }
}

#[test]
fn tool_calls_go_to_their_own_session_after_the_move_into_the_workspace() {
    let calls = |s: &crate::blackbox::sequence::Sequence| {
        s.ops.iter().filter(|op| matches!(op, Op::Prompt { id: IdGen::Str(Small(i)), .. } if i.starts_with("tool-"))).count()
    };
    let mut with = 0;
    for case in 0..200 {
        let plain = crate::blackbox::gen::generate(9, case);
        assert_eq!(
            format!("{:?}", generate_for(9, case, None)),
            format!("{plain:?}")
        );
        let s = generate_for(9, case, Some(Profile::SdkMinimal));
        assert_eq!(
            format!("{s:?}"),
            format!("{:?}", generate_for(9, case, Some(Profile::SdkMinimal)))
        );
        let n = calls(&s);
        if n == 0 {
            continue;
        }
        with += 1;
        let enter = s.ops.iter().position(|op| matches!(op, Op::WdSet { path: PathGen::Any(Small(p)), .. } if p == CWD_PLACEHOLDER));
        let first = s.ops.iter().position(|op| matches!(op, Op::Prompt { id: IdGen::Str(Small(i)), .. } if i.starts_with("tool-")));
        assert!(enter.unwrap() < first.unwrap(), "case {case}");
        assert!(n as u64 <= MAX_CALLS);
    }
    assert!(with > 100 && with < 200, "{with}");
}

#[test]
fn the_placeholder_is_written_as_the_case_directory() {
    let cwd = std::path::Path::new("/x/case dir");
    let op = enter_workspace();
    let mut bytes = Vec::new();
    crate::ops::Renderer::default().render(&op, &mut bytes);
    let filled = String::from_utf8(fill_cwd(&bytes, cwd)).unwrap();
    assert!(filled.contains("\"/x/case dir\""), "{filled}");
    assert!(!filled.contains(CWD_PLACEHOLDER));
    assert_eq!(fill_cwd(b"plain", cwd), b"plain");
}

#[test]
fn a_tool_result_whose_text_differs_is_a_difference_named_by_its_tool() {
    use crate::blackbox::diff::compare;
    use crate::blackbox::observed::Observed;
    let with = |text: &str| {
        let mut o = Observed::default();
        let r = vec![
            ("bash".into(), "hi".into()),
            ("read_image".into(), text.into()),
        ];
        o.tool_results.insert("tools".into(), r);
        o
    };
    let (a, b) = (with("Error: x"), with("Error: y"));
    let found: Vec<String> = compare(&a, &b)
        .iter()
        .map(|f| f.class.to_string())
        .collect();
    assert_eq!(found, ["diff:tool-result:read_image"]);
    assert!(compare(&with("Error: x"), &a).is_empty());
}
