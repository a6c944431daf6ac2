//! A runtime whose model speaks OpenAI chat-completions completes turns under `--model-stub`
//! (issue 23, item 6): `fixtures/runtimes/chat_completions_runtime.py` (bug_classes.py's control
//! with every turn a streamed `POST /v1/chat/completions` to the stub) passes the whole suite, its
//! model checks judged, not UNTESTABLE; and every request the stub saw was a chat-completions one
//! it answered.

use super::KIT;
use dsh_conformance::check::CheckId;
use dsh_conformance::model_stub::{Api, ModelStub};
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::suite::run::{run, Options, StubLog};
use dsh_conformance::suite::Verdict;
use serde_json::Value;
use std::sync::Arc;

const RUNTIME: &str = "fixtures/runtimes/chat_completions_runtime.py";

/// The checks that need a model (`# requires: model`).
const MODEL_CHECKS: [&str; 4] = [
    "turn.final-text",
    "subagent.notifications",
    "turn.overlap-queued",
    "wait.settles-after-idle",
];

#[test]
fn a_chat_completions_runtime_passes_the_whole_suite_under_the_model_stub() {
    let out = assert_cmd::Command::new(KIT)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "check",
            "--model-stub",
            "--jobs",
            "2",
            "--format",
            "json",
            "--",
            "python3",
            RUNTIME,
        ])
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    let not_passed: Vec<String> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !matches!(c["verdict"].as_str(), Some("PASS" | "SKIP")))
        .map(|c| format!("{} {}: {}", c["verdict"], c["id"], c["reason"]))
        .collect();
    assert!(not_passed.is_empty(), "{}", not_passed.join("\n"));
    for id in MODEL_CHECKS {
        let c = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id} did not run"));
        assert_eq!(c["verdict"], "PASS", "{c}");
    }
    assert_eq!(out.status.code(), Some(0), "{}", report["summary"]);
}

#[test]
fn its_model_checks_are_answered_by_the_stubs_chat_completions_side() {
    let stub = Arc::new(ModelStub::start().unwrap());
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNTIME);
    let cmd = CommandSpec::new("python3").arg(script.to_str().unwrap());
    let checks = [CheckId::TurnFinalText, CheckId::SubagentNotifications];
    let opts = Options {
        jobs: 2,
        select: dsh_conformance::suite::select::Selection {
            filters: vec!["turn.final-text".into(), "subagent.notifications".into()],
            skips: Vec::new(),
        },
        env: stub.env(),
        model_stub: Some(StubLog::of(stub.clone())),
        ..Options::default()
    };
    let report = run(&cmd, "chat-completions", &opts).unwrap();
    for id in checks {
        let r = report
            .results
            .iter()
            .find(|c| c.info.id == id)
            .unwrap_or_else(|| panic!("{id} did not run: {}", super::failures(&report)));
        assert_eq!(
            r.verdict,
            Verdict::Pass,
            "{id}: {}",
            super::failures(&report)
        );
    }
    let log = stub.requests();
    assert!(!log.is_empty());
    for r in &log {
        assert_eq!(r.api, Some(Api::ChatCompletions), "{}", stub.log_text());
        assert_eq!(r.path, "/v1/chat/completions", "{}", stub.log_text());
        assert_eq!(r.status, Some(200), "{}", stub.log_text());
        assert!(r.facts.is_some(), "{}", r.summary());
    }
    // The subagent turn: its call and the child's own request ("say hi", echoed). The parent's
    // tool-result request is not waited for: the check ends at `subagent.finished`, which may
    // come before it (seen in CI under load).
    let labels: Vec<&str> = log.iter().filter_map(|r| r.directive.as_deref()).collect();
    let subagent = labels.iter().position(|l| *l == "subagent");
    assert!(subagent.is_some(), "{labels:?}");
    assert!(labels[subagent.unwrap()..].contains(&"echo"), "{labels:?}");
}

/// Issue 38, item 2: without a model (no `--model-stub`, no OPENAI_BASE_URL) each model check is
/// UNTESTABLE for the turn that ended in an error, and its case stopped waiting at that turn's
/// end instead of waiting out the reply's deadline; the verdicts are those the deadline gave.
#[test]
fn without_a_model_the_model_checks_stop_waiting_at_the_error_turn() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNTIME);
    let cmd = CommandSpec::new("python3").arg(script.to_str().unwrap());
    let opts = Options {
        jobs: 2,
        // Empty reads as not set (the runtime's `if not base_url`), whatever the tests' own
        // environment holds.
        env: vec![("OPENAI_BASE_URL".into(), String::new())],
        select: dsh_conformance::suite::select::Selection {
            filters: MODEL_CHECKS.iter().map(|s| s.to_string()).collect(),
            skips: Vec::new(),
        },
        ..Options::default()
    };
    let report = run(&cmd, "no-model", &opts).unwrap();
    assert_eq!(report.results.len(), MODEL_CHECKS.len());
    for r in &report.results {
        let Verdict::NotTestable { reason } = &r.verdict else {
            panic!("{}: {:?}", r.info.id, r.verdict);
        };
        assert!(
            reason.contains("OPENAI_BASE_URL is not set")
                && reason.contains("the case stopped waiting"),
            "{}: {reason}",
            r.info.id
        );
    }
}
