use super::*;
use serde_json::json;

fn peer(events: Vec<PeerEvent>) -> PeerLog {
    let events = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| (Duration::from_millis(i as u64), e))
        .collect();
    PeerLog {
        n: 1,
        argv: Vec::new(),
        events,
    }
}

fn req(id: &str, method: &str) -> PeerEvent {
    PeerEvent::Received(json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string())
}

fn resp(id: &str) -> PeerEvent {
    PeerEvent::Wrote(json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string())
}

#[test]
fn out_of_order_needs_two_requests_in_flight_and_their_answers_swapped() {
    let in_order = peer(vec![req("1", "a"), resp("1"), req("2", "b"), resp("2")]);
    let o = Observation {
        peers: vec![in_order],
        ops: Vec::new(),
        ..Default::default()
    };
    assert!(matches!(ids_out_of_order(&o), Verdict::NotTestable { .. }));
    let swapped = || peer(vec![req("1", "a"), req("2", "b"), resp("2"), resp("1")]);
    let ops = |a: &str, b: &str| {
        let r = json!({"ok": true, "results": [{"ok": true, "cwd": a}, {"ok": true, "cwd": b}]});
        let mut ops = vec![(Op::Start, Outcome::Ok(json!({})), Duration::ZERO); 3];
        ops.push((Op::Concurrent(Vec::new()), Outcome::Ok(r), Duration::ZERO));
        ops
    };
    let o = Observation {
        peers: vec![swapped()],
        ops: ops("/w/a", "/w/b"),
        ..Default::default()
    };
    assert_eq!(ids_out_of_order(&o), Verdict::Pass);
    let o = Observation {
        peers: vec![swapped()],
        ops: ops("/w/b", "/w/a"),
        ..Default::default()
    };
    assert!(matches!(ids_out_of_order(&o), Verdict::Fail(_)));
}

#[test]
fn a_client_that_serialises_requests_its_driver_made_at_once_is_not_applicable() {
    let in_order = || peer(vec![req("1", "a"), resp("1"), req("2", "b"), resp("2")]);
    let r =
        json!({"ok": true, "results": [{"ok": true, "cwd": "/w/a"}, {"ok": true, "cwd": "/w/b"}]});
    let mut ops = vec![(Op::Start, Outcome::Ok(json!({})), Duration::ZERO); 3];
    ops.push((Op::Concurrent(Vec::new()), Outcome::Ok(r), Duration::ZERO));
    let o = Observation {
        peers: vec![in_order()],
        ops: ops.clone(),
        ..Default::default()
    };
    let Verdict::Skip { reason } = ids_out_of_order(&o) else {
        panic!("{:?}", ids_out_of_order(&o))
    };
    assert!(
        reason.starts_with("not applicable to this client"),
        "{reason}"
    );
    // One of the two failed: nothing says how the client sends requests.
    let failed = json!({"ok": true, "results": [{"ok": true, "cwd": "/w/a"}, {"ok": false}]});
    ops[3].1 = Outcome::Ok(failed);
    let o = Observation {
        peers: vec![in_order()],
        ops,
        ..Default::default()
    };
    assert!(matches!(ids_out_of_order(&o), Verdict::NotTestable { .. }));
}

#[test]
fn a_client_whose_api_cannot_make_two_requests_at_once_is_not_applicable() {
    let in_order = peer(vec![req("1", "a"), resp("1"), req("2", "b"), resp("2")]);
    let mut ops = vec![(Op::Start, Outcome::Ok(json!({})), Duration::ZERO); 3];
    let e = |class: &str| {
        Outcome::Err(crate::client::driver::DriverError {
            class: class.into(),
            code: None,
            message: "one request at a time".into(),
        })
    };
    ops.push((Op::Concurrent(Vec::new()), e("unsupported"), Duration::ZERO));
    let mut o = Observation {
        peers: vec![in_order],
        ops,
        ..Default::default()
    };
    // The driver's words are judged in one place for every check, not by the check's judge.
    assert!(matches!(ids_out_of_order(&o), Verdict::NotTestable { .. }));
    let Some(Verdict::Skip { reason }) = unsupported(&o) else {
        panic!("{:?}", unsupported(&o))
    };
    assert!(
        reason.starts_with("not applicable to this client")
            && reason.contains("(one request at a time)"),
        "{reason}"
    );
    o.ops[3].1 = e("other");
    assert!(matches!(ids_out_of_order(&o), Verdict::NotTestable { .. }));
    assert_eq!(unsupported(&o), None);
}

/// Issue 37, item 3: an operation the client's API lacks (an older SDK) is "not supported by
/// this client", with its driver's words, for whichever check needed it; a bounded run a
/// driver refused is untestable, never a failure on its words.
#[test]
fn an_operation_the_client_lacks_is_not_supported_and_a_refused_bound_untestable() {
    let lacks = || {
        Outcome::Err(crate::client::driver::DriverError {
            class: "unsupported".into(),
            code: None,
            message: "this SDK has no Session.set_working_directory".into(),
        })
    };
    let ok = || Outcome::Ok(json!({"ok": true}));
    let at = |op: Op, out: Outcome| Observation {
        ops: vec![(Op::Start, ok(), Duration::ZERO), (op, out, Duration::ZERO)],
        ..Default::default()
    };
    let set = Op::CwdSet {
        session: "s1".into(),
        path: "a".into(),
    };
    let Some(Verdict::Skip { reason }) = unsupported(&at(set, lacks())) else {
        panic!("not a skip")
    };
    assert_eq!(reason, "not supported by this client: it cannot set a session's working directory (its driver says: this SDK has no Session.set_working_directory)");
    let resume = Op::Resume {
        session: "s1".into(),
    };
    assert!(matches!(
        unsupported(&at(resume.clone(), lacks())),
        Some(Verdict::Skip { reason }) if reason.contains("cannot resume a stored session")
    ));
    // Inside a concurrent operation: the sub-operation the client lacks is named.
    let get = Op::CwdGet {
        session: "s1".into(),
    };
    let results = json!({"ok": true, "results": [
        {"ok": false, "error": {"class": "unsupported", "message": "no get_working_directory"}},
        {"ok": false, "error": {"class": "unsupported", "message": "no get_working_directory"}},
    ]});
    let both = Op::Concurrent(vec![get.clone(), get]);
    assert!(matches!(
        unsupported(&at(both, Outcome::Ok(results))),
        Some(Verdict::Skip { reason }) if reason.contains("cannot get a session's working directory (its driver says: no get_working_directory)")
    ));
    let bounded = Op::RunBounded {
        session: "s1".into(),
        text: "t".into(),
        timeout_ms: 3000,
    };
    assert!(matches!(
        unsupported(&at(bounded, lacks())),
        Some(Verdict::NotTestable { reason }) if reason.contains("its driver says the client cannot bound a run (this SDK")
    ));
    assert_eq!(unsupported(&at(resume, ok())), None);
}

#[test]
fn a_request_before_the_initialize_answer_fails_and_none_after_it_is_untestable() {
    let early = peer(vec![
        req("1", "initialize"),
        req("2", "session/prompt"),
        resp("1"),
    ]);
    let o = Observation {
        peers: vec![early],
        ops: Vec::new(),
        ..Default::default()
    };
    assert!(matches!(waits_for_initialize(&o), Verdict::Fail(_)));
    let alone = peer(vec![req("1", "initialize"), resp("1")]);
    let o = Observation {
        peers: vec![alone],
        ops: Vec::new(),
        ..Default::default()
    };
    assert!(matches!(
        waits_for_initialize(&o),
        Verdict::NotTestable { .. }
    ));
    let good = peer(vec![
        req("1", "initialize"),
        resp("1"),
        req("2", "session/prompt"),
    ]);
    let o = Observation {
        peers: vec![good],
        ops: Vec::new(),
        ..Default::default()
    };
    assert_eq!(waits_for_initialize(&o), Verdict::Pass);
}

#[test]
fn a_kill_without_shutdown_fails_graceful_shutdown() {
    let ops = vec![(Op::Close, Outcome::Ok(json!({})), Duration::ZERO)];
    let killed = peer(vec![req("1", "initialize"), PeerEvent::Gone]);
    let o = Observation {
        peers: vec![killed],
        ops: ops.clone(),
        ..Default::default()
    };
    assert!(matches!(graceful_shutdown(&o), Verdict::Fail(_)));
    let hung = vec![(Op::Close, Outcome::TimedOut, Duration::ZERO)];
    let o = Observation {
        peers: vec![peer(vec![req("9", "shutdown")])],
        ops: hung,
        ..Default::default()
    };
    assert!(matches!(graceful_shutdown(&o), Verdict::Fail(_)));
    let clean = peer(vec![req("9", "shutdown"), resp("9"), PeerEvent::Exit(0)]);
    let o = Observation {
        peers: vec![clean],
        ops,
        ..Default::default()
    };
    assert_eq!(graceful_shutdown(&o), Verdict::Pass);
}

fn error(class: &str, code: Option<i64>, message: &str) -> Outcome {
    Outcome::Err(crate::client::driver::DriverError {
        class: class.into(),
        code,
        message: message.into(),
    })
}

fn ops(second: Outcome, third: Outcome) -> Vec<(Op, Outcome, Duration)> {
    let ok = Outcome::Ok(json!({"ok": true}));
    vec![
        (Op::Start, ok, Duration::ZERO),
        (Op::Close, second, Duration::ZERO),
        (Op::Close, third, Duration::ZERO),
    ]
}

#[test]
fn an_error_response_must_be_reported_as_class_rpc_with_its_code() {
    let done = Outcome::Ok(json!({"ok": true, "text": "after the error"}));
    let judged = |class| {
        let missing = "session \"kit-no-such-session\" not found";
        let o = Observation {
            ops: ops(error(class, Some(-32603), missing), done.clone()),
            ..Default::default()
        };
        typed_errors(&o)
    };
    assert_eq!(judged("rpc"), Verdict::Pass);
    assert!(matches!(judged("transport"), Verdict::Fail(_)));
    assert!(matches!(judged("other"), Verdict::Fail(_)));
}

#[test]
fn a_runtime_exit_noticed_only_by_the_clients_own_bound_fails() {
    let judged = |class| {
        let o = Observation {
            peers: vec![peer(vec![req("1", "initialize"), PeerEvent::Exit(1)])],
            ops: ops(error(class, None, "gone"), Outcome::TimedOut),
            ..Default::default()
        };
        runtime_exit(&o)
    };
    assert_eq!(judged("transport"), Verdict::Pass);
    assert!(matches!(judged("timeout"), Verdict::Fail(_)));
}
