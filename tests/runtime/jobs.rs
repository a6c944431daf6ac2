//! The `sdk` bash's `workdir`, `timeoutMs` and `run_in_background` and the job tools
//! (docs/CONTRACT.md#s13.6) through the in-memory runtime: what a backend is asked, the
//! release's errors, a background job on a host without a backend, and (under bubblewrap) a
//! call promoted to a job and killed. The byte-exact comparison with the release is the
//! fidelity test's (`sandbox_bash_jobs`, `sandbox_bash_jobs_no_backend`).

use super::harness::{cfg, events, prompt, statuses, H};
use crate::support::sandbox::bwrap_usable;
use dsh_conformance::runtime::sandbox::{Backend, Confined, Ran, Request, Running, Sandbox};
use dsh_conformance::runtime::Edition;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A backend that runs nothing and keeps the directories it was asked to run in.
#[derive(Default)]
struct Dirs(Mutex<Vec<(String, String)>>);

impl Backend for Dirs {
    fn run(&self, req: &Request<'_>) -> Confined {
        let show = |p: &std::path::Path| p.to_string_lossy().into_owned();
        self.0
            .lock()
            .unwrap()
            .push((show(req.cwd), show(req.workspace)));
        Confined::Ran(Ran {
            exit_code: Some(0),
            ..Ran::default()
        })
    }
}

/// The session `s`'s events of one turn driven by the directive `text`.
fn turn(h: &mut H, id: u32, text: &str) -> Vec<Value> {
    let mut f = h.send(prompt(id, "s", text));
    f.extend(h.settle());
    events(&f, "s")
}

fn of<'a>(ev: &'a [Value], ty: &str) -> Vec<&'a Value> {
    ev.iter()
        .filter(|e| e["type"] == ty)
        .map(|e| &e["data"])
        .collect()
}

fn result_text(ev: &[Value]) -> String {
    let r = of(ev, "tool/result");
    r[0]["message"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn bash(args: Value) -> String {
    let mut a = json!({"description":"d","command":"pwd"});
    a.as_object_mut()
        .unwrap()
        .extend(args.as_object().unwrap().clone());
    format!("call: bash {a}")
}

#[test]
fn workdir_is_where_the_command_runs_and_the_result_says_so() {
    let backend = Arc::new(Dirs::default());
    let mut c = cfg(Edition::Current);
    c.sandbox = Sandbox::with(backend.clone());
    let mut h = H::with(c);
    h.init();
    let cwd = "/work-dir";
    for (i, (w, at)) in [
        ("sub", "/work-dir/sub"),
        ("/usr", "/usr"),
        ("", "/work-dir/"),
    ]
    .into_iter()
    .enumerate()
    {
        let ev = turn(&mut h, 2 + i as u32, &bash(json!({"workdir": w})));
        assert_eq!(of(&ev, "tool/result")[0]["meta"], json!({"cwd": at}), "{w}");
        let asked = backend.0.lock().unwrap().last().cloned().unwrap();
        assert_eq!(
            asked,
            (at.to_owned(), cwd.to_owned()),
            "the workspace stays {cwd}"
        );
    }
}

#[test]
fn a_timeout_that_is_not_positive_is_the_releases_error_and_registers_no_job() {
    let mut h = H::with(cfg(Edition::Current));
    h.init();
    for (i, t) in ["0", "-5"].into_iter().enumerate() {
        let ev = turn(
            &mut h,
            2 + i as u32,
            &bash(json!({"timeoutMs": t.parse::<i64>().unwrap()})),
        );
        assert_eq!(
            result_text(&ev),
            format!("Error: invalid timeoutMs: expected a positive number, got {t}")
        );
        assert!(of(&ev, "job/registered").is_empty());
    }
}

#[test]
fn a_background_job_without_a_backend_fails_at_once_and_the_model_is_told() {
    let mut h = H::with(cfg(Edition::Current));
    h.init();
    let ev = turn(
        &mut h,
        2,
        &bash(json!({"command":"sleep 30","run_in_background": true})),
    );
    let id = of(&ev, "job/registered")[0]["jobId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(result_text(&ev), format!("started background job {id}"));
    assert_eq!(of(&ev, "job/settled")[0]["status"], "failed");
    let notices: Vec<&Value> = of(&ev, "user/message")
        .into_iter()
        .filter(|m| m["source"]["kind"] == "tool-jobs")
        .collect();
    let text = notices[0]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "background job {id} (bash: sleep 30) finished [status: failed, sandbox mode"
        )),
        "{text}"
    );
    let ev = turn(&mut h, 3, "call: job_list {}");
    assert_eq!(
        result_text(&ev),
        format!("{id} [bash] failed \u{2014} sleep 30")
    );
}

#[test]
fn a_call_that_outlasts_its_timeout_becomes_a_job_that_job_kill_ends() {
    if !bwrap_usable("the sdk bash's promotion to a background job") {
        return;
    }
    let mut c = cfg(Edition::Current);
    let ws = std::env::temp_dir().join(format!("dsh-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&ws).unwrap();
    c.process_cwd = ws.clone();
    c.sandbox = Sandbox::host();
    let mut h = H::with(c);
    h.send(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd": ws,
        "provider":"deepseek-official","model":"deepseek-v4-flash"}}),
    );
    let t0 = Instant::now();
    let ev = turn(
        &mut h,
        2,
        &bash(json!({"command":"echo early; sleep 30","timeoutMs":300})),
    );
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "waited {:?}",
        t0.elapsed()
    );
    let id = of(&ev, "job/registered")[0]["jobId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(of(&ev, "job/settled").is_empty(), "it still runs");
    assert!(
        result_text(&ev).starts_with(&format!(
            "early\n[still running after 300ms; moved to background job {id}]\n"
        )),
        "{}",
        result_text(&ev)
    );
    let ev = turn(
        &mut h,
        3,
        &format!("call: job_output {{\"job_id\":\"{id}\"}}"),
    );
    assert_eq!(result_text(&ev), "(no new output)\n[status: running]");
    let ev = turn(
        &mut h,
        4,
        &format!("call: job_kill {{\"job_id\":\"{id}\"}}"),
    );
    assert_eq!(
        result_text(&ev),
        format!("requested cancellation of job {id}")
    );
    let types: Vec<&str> = ev.iter().filter_map(|e| e["type"].as_str()).collect();
    let at = |t: &str| types.iter().position(|x| *x == t).unwrap();
    assert!(at("step/end") < at("job/settled"), "{types:?}");
    let settled = of(&ev, "job/settled")[0];
    assert_eq!(
        (settled["status"].as_str(), settled["detail"].as_str()),
        (Some("killed"), Some("signal: SIGTERM"))
    );
    assert_eq!(settled["cause"], "kill");
    let _ = std::fs::remove_dir_all(&ws);
}

/// A backend whose commands run until the test opens the gate (or a job tool waits for them),
/// then end with `done` on stdout.
#[derive(Clone, Default)]
struct Gate(Arc<Mutex<bool>>);

impl Gate {
    fn open(&self) {
        *self.0.lock().unwrap() = true;
    }
}

impl Running for Gate {
    fn output(&self) -> (Vec<u8>, Vec<u8>) {
        let open = *self.0.lock().unwrap();
        (
            if open { b"done\n".to_vec() } else { Vec::new() },
            Vec::new(),
        )
    }
    /// A wait of any length sees it end (as if it ended meanwhile).
    fn wait(&mut self, d: Duration) -> Option<Ran> {
        if !d.is_zero() {
            self.open();
        }
        let open = *self.0.lock().unwrap();
        open.then(|| Ran {
            stdout: "done\n".into(),
            exit_code: Some(0),
            ..Ran::default()
        })
    }
    fn terminate(&mut self) -> Ran {
        self.open();
        self.wait(Duration::ZERO).unwrap()
    }
}

impl Backend for Gate {
    fn run(&self, _: &Request<'_>) -> Confined {
        Confined::Ran(Ran::default())
    }
    fn start(&self, _: &Request<'_>) -> Result<Box<dyn Running>, Confined> {
        Ok(Box::new(self.clone()))
    }
}

fn gated() -> (H, Gate) {
    let gate = Gate::default();
    let mut c = cfg(Edition::Current);
    c.sandbox = Sandbox::with(Arc::new(gate.clone()));
    let mut h = H::with(c);
    h.init();
    (h, gate)
}

/// Starts the background job `work` with prompt 2: its id, and the turn's events.
fn start_work(h: &mut H) -> (String, Vec<Value>) {
    let ev = turn(
        h,
        2,
        &bash(json!({"command":"work","run_in_background": true})),
    );
    let id = of(&ev, "job/registered")[0]["jobId"].as_str().unwrap();
    (id.to_owned(), ev)
}

const NOTICE: &str =
    "(bash: work) finished [status: completed, exit code: 0]. Read its output with job_output.";

/// The texts of a list of events' assistant messages.
fn replies(ev: &[Value]) -> Vec<String> {
    of(ev, "assistant/message")
        .iter()
        .map(|m| {
            m["message"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

#[test]
fn a_job_that_ends_while_its_session_is_idle_opens_a_turn_with_its_notice() {
    let (mut h, gate) = gated();
    let (id, ev) = start_work(&mut h);
    assert!(of(&ev, "job/settled").is_empty(), "it still runs");
    assert!(h.rt.watching_jobs());
    h.now += 1000;
    assert!(h.poll().is_empty(), "nothing happens while it runs");
    gate.open();
    h.now += 1000;
    let frames = h.poll();
    let ev = events(&frames, "s");
    let types: Vec<&str> = ev.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        &types[..4],
        [
            "job/settled",
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced"
        ],
        "{types:?}"
    );
    let settled = of(&ev, "job/settled")[0];
    assert_eq!(
        (
            &settled["status"],
            &settled["cause"],
            &settled["detail"],
            &settled["finishedAt"]
        ),
        (
            &json!("completed"),
            &json!("producer"),
            &json!("exit code: 0"),
            &json!(h.now)
        )
    );
    let splice = of(&ev, "agent/inbox/spliced")[0];
    assert_eq!(splice["target"], "next-turn");
    let notice = &splice["inserted"][0];
    let text = format!("background job {id} {NOTICE}");
    assert_eq!(notice["content"][0]["text"], text);
    assert_eq!(notice["source"]["kind"], "tool-jobs");
    assert_eq!(replies(&ev), [text], "the stand-in model echoes the notice");
    assert_eq!(statuses(&frames, "s"), ["running", "idle"]);
    assert_eq!(of(&ev, "turn/end")[0]["reason"]["kind"], "completed");
    assert!(!h.rt.watching_jobs());
    // Its output is still there to read, and the job is settled once.
    let ev = turn(
        &mut h,
        3,
        &format!("call: job_output {{\"job_id\":\"{id}\"}}"),
    );
    assert_eq!(result_text(&ev), "done\n[status: completed, exit code: 0]");
    assert!(of(&ev, "job/settled").is_empty());
}

#[test]
fn a_job_that_ends_during_a_turn_is_read_at_its_next_step() {
    let (mut h, gate) = gated();
    let (id, _) = start_work(&mut h);
    // A turn whose model answers in 5 s: the job ends meanwhile.
    let mut ev = events(&h.send(prompt(3, "s", "slow:5 reply: later")), "s");
    gate.open();
    h.now += 1000;
    ev.extend(events(&h.poll(), "s"));
    let splice = of(&ev, "agent/inbox/spliced")
        .into_iter()
        .find(|s| s["target"] == "next-step")
        .cloned()
        .expect("the notice waits for the next step");
    assert_eq!(splice["inserted"][0]["source"]["kind"], "tool-jobs");
    assert!(of(&ev, "turn/start").len() == 1, "no turn of its own");
    ev.extend(events(&h.settle(), "s"));
    let text = format!("background job {id} {NOTICE}");
    assert_eq!(replies(&ev), ["later".to_owned(), text]);
    let steps: Vec<&Value> = of(&ev, "step/start");
    assert_eq!(steps.len(), 2, "the notice's step follows the answer's");
    assert_eq!(of(&ev, "turn/end").len(), 1);
}

#[test]
fn a_job_the_model_kills_or_waits_for_brings_no_notice() {
    let (mut h, gate) = gated();
    let (id, _) = start_work(&mut h);
    let ev = turn(
        &mut h,
        3,
        &format!("call: job_kill {{\"job_id\":\"{id}\"}}"),
    );
    assert_eq!(of(&ev, "job/settled")[0]["cause"], "kill");
    gate.open();
    h.now += 1000;
    let after = h.poll();
    assert!(after.is_empty(), "{after:?}");
    assert!(!h.rt.watching_jobs());
    let (mut h, _) = gated();
    let (id, _) = start_work(&mut h);
    let ev = turn(
        &mut h,
        3,
        &format!("call: job_output {{\"job_id\":\"{id}\",\"wait\":true}}"),
    );
    assert_eq!(result_text(&ev), "done\n[status: completed, exit code: 0]");
    assert_eq!(of(&ev, "job/settled")[0]["cause"], "producer");
    let notices = of(&ev, "user/message")
        .into_iter()
        .filter(|m| m["source"]["kind"] == "tool-jobs")
        .count();
    assert_eq!(notices, 0, "{ev:?}");
}

#[test]
fn an_escalation_nobody_can_approve_is_refused_before_anything_runs() {
    let backend = Arc::new(Dirs::default());
    let mut c = cfg(Edition::Current);
    c.sandbox = Sandbox::with(backend.clone());
    let mut h = H::with(c);
    h.init();
    let cases = [
        (json!({"sandbox_permissions":"danger-full-access","justification":"why"}),
         "Error: sandbox escalation to \"danger-full-access\" requires approval, but no approval channel is available", 2),
        (json!({"sandbox_permissions":"danger-full-access"}),
         "Error: invalid escalation: sandbox_permissions requires a justification", 0),
        (json!({"sandbox_permissions":"read-only","justification":"why"}),
         "Error: invalid arguments: \"sandbox_permissions\" must be one of [\"workspace-write\",\"danger-full-access\"]", 0),
        (json!({"timeoutMs":"5","workdir":1}),
         "Error: invalid arguments: \"timeoutMs\" must be a number; \"workdir\" must be a string", 0),
    ];
    for (i, (args, text, approvals)) in cases.into_iter().enumerate() {
        let ev = turn(&mut h, 2 + i as u32, &bash(args.clone()));
        assert_eq!(result_text(&ev), text, "{args}");
        assert!(of(&ev, "job/registered").is_empty(), "{args}");
        let asked = of(&ev, "approval/asked").len() + of(&ev, "approval/decided").len();
        assert_eq!(asked, approvals, "{args}");
    }
    assert!(backend.0.lock().unwrap().is_empty(), "nothing ran");
    // Its own mode is no escalation: the call runs.
    let ev = turn(
        &mut h,
        9,
        &bash(json!({"sandbox_permissions":"workspace-write","justification":"why"})),
    );
    assert_eq!(of(&ev, "job/settled")[0]["status"], "completed");
    assert_eq!(backend.0.lock().unwrap().len(), 1);
}
