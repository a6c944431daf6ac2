//! Verdicts that name the right cause (issue 20, item 4): a crash on a check's input FAILs it; a
//! non-object params shape is judged against `{}`'s answer, whatever kind it is; a model the stub
//! cannot reach makes the model checks UNTESTABLE, saying what the stub saw; a missing method is
//! one root cause; a 2026-08 method surface gets the edition hint whatever its unknown-method
//! error looks like.

use super::{KIT, RUNTIME};
use crate::support::report::JsonReport;
use dsh_conformance::check::CheckId;
use dsh_conformance::model_stub::ModelStub;
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::suite::run::{run, Options, StubLog};
use dsh_conformance::suite::{FailureKind, Report, Verdict};
use std::sync::Arc;
use std::time::Duration;

fn mutant(list: &str) -> CommandSpec {
    CommandSpec::new(KIT)
        .arg("mutant")
        .arg(list)
        .arg("--")
        .arg(RUNTIME)
}

fn opts(filter: Option<&str>) -> Options {
    Options {
        jobs: 2,
        select: filter
            .map(dsh_conformance::suite::select::Selection::only)
            .unwrap_or_default(),
        frame_timeout: Duration::from_secs(3),
        ..Options::default()
    }
}

fn verdict(report: &Report, id: CheckId) -> &Verdict {
    &report
        .results
        .iter()
        .find(|c| c.info.id == id)
        .unwrap_or_else(|| panic!("{id} did not run"))
        .verdict
}

#[test]
fn a_runtime_that_crashes_on_a_checks_input_fails_that_check() {
    let report = run(
        &mutant("crash-on-array-params"),
        "crash",
        &opts(Some("frame.params-normalised")),
    )
    .unwrap();
    let Verdict::Fail(f) = verdict(&report, CheckId::FrameParamsNormalised) else {
        panic!("{}", super::failures(&report));
    };
    assert_eq!(f.kind, FailureKind::Exit, "{f}");
    // The reason quotes the input the runtime died on, and its stderr says how.
    assert!(f.reason.contains("\"id\":\"arr\""), "{}", f.reason);
    assert!(f.stderr_tail.contains("TypeError"), "{:?}", f.stderr_tail);
    let json = JsonReport(report.json());
    assert_eq!(
        json.verdict(CheckId::FrameParamsNormalised),
        "FAIL",
        "{json}"
    );
}

#[test]
fn non_object_params_get_the_answer_of_empty_params_even_when_that_is_a_result() {
    // `defaults-initialize` accepts initialize {} (cwd, provider and model defaulted): the four
    // other shapes get the same serverInfo, so the rule holds.
    let report = run(
        &mutant("defaults-initialize"),
        "defaults",
        &opts(Some("frame.params-normalised")),
    )
    .unwrap();
    assert_eq!(
        verdict(&report, CheckId::FrameParamsNormalised),
        &Verdict::Pass,
        "{}",
        super::failures(&report)
    );
}

/// A runtime whose model requests go to `path` on the stub (none at all when `None`): its turns
/// end in an error, with no assistant message.
const WRONG_API_RUNTIME: &str = r#"
import json, os, sys, urllib.request, uuid
PATH = sys.argv[1] if len(sys.argv) > 1 else ""
seqs = {}
def send(m):
    sys.stdout.write(json.dumps(m, separators=(",", ":")) + "\n"); sys.stdout.flush()
def event(sid, type_, data):
    n = seqs.get(sid, 0); seqs[sid] = n + 1
    send({"jsonrpc": "2.0", "method": "session.event", "params": {"sessionId": sid, "event": {"type": type_, "seq": n, "time": 1795984000000, "data": data}}})
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict) or "id" not in msg:
        continue
    p = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    m = msg.get("method")
    if m == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"serverInfo": {"name": "deepseek-harness-sdk-runtime", "version": "1"}}})
    elif m == "session/prompt":
        sid, mid = p.get("sessionId", ""), str(uuid.uuid4())
        event(sid, "agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [{"content": p.get("contentBlocks", []), "source": {"kind": "user"}, "role": "user", "id": mid}]})
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"messageId": mid}})
        send({"jsonrpc": "2.0", "method": "session.status", "params": {"sessionId": sid, "status": "running"}})
        event(sid, "turn/start", {"turn": 1})
        if PATH:
            req = urllib.request.Request(os.environ["DEEPSEEK_BASE_URL"] + PATH, data=b"{}", method="POST",
                                         headers={"content-type": "application/json", "authorization": "Bearer " + os.environ.get("DEEPSEEK_API_KEY", "")})
            try:
                urllib.request.urlopen(req, timeout=5).read()
            except Exception:
                pass
        event(sid, "turn/end", {"turn": 1, "reason": {"kind": "error", "message": "model unreachable"}})
        send({"jsonrpc": "2.0", "method": "session.status", "params": {"sessionId": sid, "status": "idle"}})
    elif m == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        sys.exit(0)
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": "unknown DeepSeek Harness SDK runtime method: " + str(m)}})
"#;

#[test]
fn a_model_the_stub_cannot_reach_makes_the_model_checks_untestable_saying_what_the_stub_saw() {
    let dir = std::env::temp_dir().join(format!("dsh-verdicts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("wrong_api_runtime.py");
    std::fs::write(&script, WRONG_API_RUNTIME).unwrap();
    let cases = [
        (
            Some("/v1/responses"),
            "all answered 404: POST /v1/responses",
        ),
        (None, "no request reached the model stub"),
    ];
    std::thread::scope(|s| {
        for (path, said) in cases {
            for check in [CheckId::TurnFinalText, CheckId::SubagentNotifications] {
                let script = &script;
                s.spawn(move || {
                    let stub = Arc::new(ModelStub::start().unwrap());
                    let mut cmd = CommandSpec::new("python3").arg(script.to_str().unwrap());
                    if let Some(p) = path {
                        cmd = cmd.arg(p);
                    }
                    let o = Options {
                        env: stub.env(),
                        model_stub: Some(StubLog::of(stub.clone())),
                        ..opts(Some(check.as_str()))
                    };
                    let report = run(&cmd, "wrong api", &o).unwrap();
                    match verdict(&report, check) {
                        Verdict::NotTestable { reason } => {
                            assert!(reason.contains(said), "{check}: {reason}");
                            assert!(reason.contains("Anthropic Messages"), "{check}: {reason}");
                        }
                        v => panic!("{check} ({path:?}): {} {}", v.word(), v.summary()),
                    }
                    let json = JsonReport(report.json());
                    assert_eq!(json.verdict(check), "UNTESTABLE", "{json}");
                });
            }
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_method_is_one_root_cause() {
    let report = run(
        &mutant("no-working-directory"),
        "no wd",
        &opts(Some("working-directory")),
    )
    .unwrap();
    assert!(matches!(
        verdict(&report, CheckId::WorkingDirectoryGetSet),
        Verdict::Fail(_)
    ));
    let causes: Vec<CheckId> = report.root_causes().iter().map(|c| c.check).collect();
    assert_eq!(
        causes,
        [CheckId::WorkingDirectoryGetSet],
        "{}",
        super::failures(&report)
    );
    assert_eq!(
        verdict(&report, CheckId::WorkingDirectoryValidation),
        &Verdict::Blocked {
            by: vec![CheckId::WorkingDirectoryGetSet]
        }
    );
    // Gating is judged on the methods the runtime has: their absence is not a gating failure.
    for (list, id) in [
        ("no-working-directory", CheckId::InitializeGatesRequests),
        ("no-session-wait", CheckId::InitializeGatesRequests),
        ("no-resume", CheckId::InitializeGatesRequests),
    ] {
        let report = run(&mutant(list), list, &opts(Some(id.as_str()))).unwrap();
        assert_eq!(
            verdict(&report, id),
            &Verdict::Pass,
            "{list}: {}",
            super::failures(&report)
        );
    }
}

#[test]
fn a_2026_08_surface_gets_the_edition_hint_whatever_its_unknown_method_error() {
    // The 2026-08 runtime whose unknown methods answer JSON-RPC's `Method not found`.
    let cmd = mutant("method-not-found").arg("--edition").arg("2026-08");
    let report = run(&cmd, "2026-08, method not found", &opts(None)).unwrap();
    let hint = report.hint.clone().unwrap_or_default();
    assert!(hint.contains("try --edition 2026-08"), "{hint:?}");
    assert_eq!(
        report.json()["hint"].as_str(),
        Some(hint.as_str()),
        "the JSON report carries the hint"
    );
}
