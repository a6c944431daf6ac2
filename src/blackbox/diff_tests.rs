//! The comparison's tests: which differences two runs' observations make, and which they don't.

use super::*;

#[test]
fn a_difference_is_shown_with_the_items_around_it() {
    let v: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    assert_eq!(window(&v[..5], 2), "0 1 2 3 4");
    let w = window(&v, 30);
    assert!(w.starts_with("… (18 items) 18 19"), "{w}");
    assert!(w.ends_with("29 30 31 32 33 34 35 36 37 38 39"), "{w}");
    assert!(window(&v, 3).ends_with("14 … (40 items)"));
}

/// The differences between two runs of session `s1` (`<reference>-><runtime>` of each
/// `diff:events` class), each run given as its
/// observed labels ([`events::label`]: `#` and the role of a splice, a `user/message` or a
/// `turn/end`) joined by spaces, `{..}` standing for [`TURN`] and `[..]` for [`STEP`].
fn session_diff(subject: &str, reference: &str) -> Vec<String> {
    let labels = |v: &str| -> Vec<String> {
        let v = v.replace("{..}", TURN).replace("[..]", STEP);
        v.split_whitespace().map(String::from).collect()
    };
    let (mut s, mut r) = (Observed::default(), Observed::default());
    s.events.insert("s1".into(), labels(subject));
    r.events.insert("s1".into(), labels(reference));
    let d = compare_sessions(&s, &r, &BTreeSet::new());
    d.iter()
        .map(|f| match &f.class {
            FindingClass::Diff(DiffKind::Events, what) => what.clone(),
            c => c.to_string(),
        })
        .collect()
}

/// A new session's events (§5).
const NEW: &str = "permission/preset sandbox/mode approval/policy";
/// One step of a turn, answered by the model.
const STEP: &str =
    "step/start user/message session-log-deepseek/delivery-accepted assistant/message step/end";
/// The rest of a prompt's turn after its claim: its step and its end.
const TURN: &str = "[..] turn/end";
const RECEIPT: &str = "agent/inbox/spliced#receipt";
const CLAIM: &str = "agent/inbox/spliced#claim";

/// Seen between two runs of the reference on the same sequence (seeds 1–21, 20 s each): a
/// second prompt reaching the session while its first turn runs (queued: the next turn starts
/// at once) or once it is idle; its receipt anywhere in the first turn.
#[test]
fn a_prompt_queued_during_a_turn_or_sent_to_the_idle_session_is_no_difference() {
    let via_idle = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle \
         {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle"
    );
    let queued = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {RECEIPT} {{..}} \
         turn/start {CLAIM} {{..}} status:idle"
    );
    let late = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} step/start user/message \
         {RECEIPT} session-log-deepseek/delivery-accepted assistant/message step/end \
         turn/end turn/start {CLAIM} {{..}} status:idle"
    );
    for (a, b) in [
        (&via_idle, &queued),
        (&queued, &via_idle),
        (&late, &via_idle),
    ] {
        assert_eq!(session_diff(a, b), [] as [String; 0], "{a}\n{b}");
    }
    // Not races: a turn that never ran, a receipt after its turn started, an idle inside a
    // turn (the contract fixes idle after `turn/end`), no idle at the end, never running.
    let lost =
        format!("{NEW} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle {RECEIPT}");
    assert_eq!(
        session_diff(&lost, &via_idle),
        ["agent/inbox/spliced->status:idle"]
    );
    let unreceipted = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {{..}} \
         turn/start {RECEIPT} {CLAIM} {{..}} status:idle"
    );
    assert_eq!(
        session_diff(&unreceipted, &queued),
        ["agent/inbox/spliced->turn/start"]
    );
    let early_idle = via_idle.replacen("{..} status:idle", "[..] status:idle turn/end", 1);
    assert_eq!(
        session_diff(&early_idle, &via_idle),
        ["turn/end->status:idle"]
    );
    let no_idle = queued.strip_suffix(" status:idle").unwrap();
    assert_eq!(session_diff(no_idle, &queued), ["status:idle->(end)"]);
    let never_running = via_idle.replace(" status:running", "");
    assert_eq!(
        session_diff(&never_running, &via_idle),
        ["status:running->agent/inbox/spliced"]
    );
}

/// A missing event, an extra one, events in another order: differences wherever they are.
#[test]
fn what_a_turn_holds_still_differs() {
    let two = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle \
         {RECEIPT} status:running turn/start {CLAIM} step/start user/message session/title \
         session-log-deepseek/delivery-accepted assistant/message step/end turn/end status:idle"
    );
    let untitled = two.replace(" session/title", "");
    assert_eq!(
        session_diff(&untitled, &two),
        ["session/title->session-log-deepseek/delivery-accepted"]
    );
    assert_eq!(
        session_diff(&two, &untitled),
        ["session-log-deepseek/delivery-accepted->session/title"]
    );
    let swapped = two.replace(
        "session/title session-log-deepseek/delivery-accepted",
        "session-log-deepseek/delivery-accepted session/title",
    );
    assert_eq!(
        session_diff(&swapped, &two),
        ["session/title->session-log-deepseek/delivery-accepted"]
    );
    // After a race too: the second prompt queued during the first turn.
    let queued = untitled.replacen(
        &format!("{{..}} status:idle {RECEIPT} status:running"),
        &format!("{RECEIPT} {{..}}"),
        1,
    );
    assert!(queued.contains("{..} turn/start"), "{queued}");
    assert_eq!(
        session_diff(&queued, &two),
        ["session/title->session-log-deepseek/delivery-accepted"]
    );
    // A second step no note asked for.
    let stepped = two.replacen("step/end turn/end", "step/end [..] turn/end", 1);
    assert_eq!(session_diff(&stepped, &two), ["turn/end->step/start"]);
}

/// A working-directory change lands among a turn's steps, or between turns: read by the
/// turn's next step (one more step when the model had answered), or by the next turn's first
/// (seen between two runs of the reference).
#[test]
fn where_a_working_directory_change_lands_is_no_difference_but_whether_it_happened_is() {
    let change = "working-directory/change agent/inbox/spliced#note";
    let note = "user/message#note";
    let in_turn = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {change} {RECEIPT} [..] \
         agent/inbox/spliced#claim-step step/start {note} session-log-deepseek/delivery-accepted \
         assistant/message step/end turn/end turn/start {CLAIM} {{..}} status:idle"
    );
    let between = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle {change} \
         {RECEIPT} status:running turn/start agent/inbox/spliced#claim-step {CLAIM} \
         step/start {note} user/message user/message#context \
         session-log-deepseek/delivery-accepted assistant/message step/end turn/end status:idle"
    );
    assert_eq!(session_diff(&in_turn, &between), [] as [String; 0]);
    assert_eq!(session_diff(&between, &in_turn), [] as [String; 0]);
    // What follows is still compared: a title the second turn lacks.
    let tail =
        "session-log-deepseek/delivery-accepted assistant/message step/end turn/end status:idle";
    let titled = between.replace(tail, &format!("session/title {tail}"));
    assert_eq!(
        session_diff(&in_turn, &titled),
        ["session/title->session-log-deepseek/delivery-accepted"]
    );
    // Claimed by a step that was coming anyway (after a tool call): no step is added.
    let tool = "step/start assistant/message tool/call tool/result step/end";
    let by_tool_step = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {tool} {change} \
         agent/inbox/spliced#claim-step step/start {note} assistant/message step/end turn/end \
         status:idle"
    );
    let after = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {tool} step/start \
         assistant/message step/end turn/end status:idle {change}"
    );
    assert_eq!(session_diff(&by_tool_step, &after), [] as [String; 0]);
    // A change that did not happen, or a step after a tool call that did not either.
    let unchanged = between.replace(change, "");
    assert_eq!(
        session_diff(&unchanged, &between),
        ["working-directory/change->(end)"]
    );
    let short = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {tool} turn/end status:idle {change}"
    );
    assert_eq!(session_diff(&short, &after), ["step/start->turn/end"]);
}

/// A prompt queued while a turn that ends in error runs stays pending until the next prompt
/// (§6); one reaching the idle session runs (seen between two runs of the reference).
#[test]
fn a_prompt_stalled_behind_an_error_turn_is_no_difference_but_a_prompt_left_idle_is() {
    let failed = "step/start user/message assistant/attempt step/end turn/end#error";
    let stalled =
        format!("{NEW} {RECEIPT} status:running turn/start {CLAIM} {RECEIPT} {failed} status:idle");
    let ran = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {failed} status:idle \
         {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle"
    );
    assert_eq!(session_diff(&stalled, &ran), [] as [String; 0]);
    assert_eq!(session_diff(&ran, &stalled), [] as [String; 0]);
    // With a next prompt, the stalled one runs first: the same turns.
    let resumed = format!(
        "{stalled} {RECEIPT} status:running turn/start {CLAIM} {{..}} \
         turn/start {CLAIM} {{..}} status:idle"
    );
    let ran_both = format!("{ran} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle");
    assert_eq!(session_diff(&resumed, &ran_both), [] as [String; 0]);
    // Queued behind the turn before the one that failed (seed 203, case 199): stalled as well.
    let ok = "[..] turn/end";
    let behind = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {RECEIPT} {RECEIPT}@1 {ok} \
         turn/start {CLAIM} {failed} status:idle"
    );
    let ran_after = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {ok} status:idle \
         {RECEIPT} status:running turn/start {CLAIM} {failed} status:idle \
         {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle"
    );
    assert_eq!(session_diff(&behind, &ran_after), [] as [String; 0]);
    // Not a stall: the prompt reached the session idle, or the turn did not fail.
    let ignored =
        format!("{NEW} {RECEIPT} status:running turn/start {CLAIM} {failed} status:idle {RECEIPT}");
    assert_eq!(
        session_diff(&ignored, &ran),
        ["agent/inbox/spliced->status:idle"]
    );
    let completed = stalled.replace("turn/end#error", "turn/end");
    let ran_completed = ran.replace("turn/end#error", "turn/end");
    assert_eq!(
        session_diff(&completed, &ran_completed),
        ["agent/inbox/spliced->status:idle"]
    );
}

/// A subagent ends when its steps are done: its `subagent.finished` and the parent's turn
/// that reads its result land among the parent's other turns by timing (§4).
#[test]
fn where_a_subagents_result_lands_is_no_difference_but_whether_it_came_is() {
    let spawn = "step/start assistant/message tool/call subagent.started tool/result step/end";
    let notice = "agent/inbox/spliced#notice";
    let result_turn =
        format!("{notice} status:running turn/start {CLAIM} subagent.finished {{..}}");
    let early = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {spawn} {{..}} status:idle \
         {result_turn} status:idle {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle"
    );
    let late = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {spawn} {{..}} status:idle \
         {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle {result_turn} status:idle"
    );
    assert_eq!(session_diff(&early, &late), [] as [String; 0]);
    let never = late.replace(&format!(" {result_turn} status:idle"), "");
    assert_eq!(session_diff(&never, &late), ["agent/inbox/spliced->(end)"]);
}

/// Seen between the release and the reference (seed 205, case 625, and the notice allowlist
/// entries of earlier rounds): a subagent's result that lands while its parent's turn runs is
/// spliced for the turn's next step (an extra step when the model had answered, or read by the
/// step a tool call brought); one that lands while the parent is idle gets a turn of its own.
/// Only how many results came is compared.
#[test]
fn whether_a_subagents_result_is_read_at_a_step_or_in_a_turn_of_its_own_is_no_difference() {
    let spawn = "step/start assistant/message tool/call subagent.started tool/result step/end";
    let (notice, note) = (
        "agent/inbox/spliced#notice",
        "agent/inbox/spliced#notice-note",
    );
    let read = "agent/inbox/spliced#claim-step step/start user/message#notice \
                session-log-deepseek/delivery-accepted assistant/message step/end";
    let own_turn = |n: &str| {
        format!("{notice} status:running turn/start {CLAIM} subagent.finished step/start user/message#notice session-log-deepseek/delivery-accepted assistant/message {n} step/end turn/end status:idle")
    };
    let prompt = format!("{NEW} {RECEIPT} status:running turn/start {CLAIM} {spawn} {spawn}");
    // The step that answers after the tool calls.
    let answer = "step/start session-log-deepseek/delivery-accepted assistant/message step/end";
    // Both results in turns of their own, or the second read at the first one's next step.
    let two_turns = format!(
        "{prompt} {answer} turn/end status:idle {} {}",
        own_turn(""),
        own_turn("")
    );
    let merged = own_turn(&format!("subagent.finished {note}")).replace(
        "turn/end status:idle",
        &format!("{read} turn/end status:idle"),
    );
    let one_turn = format!("{prompt} {answer} turn/end status:idle {merged}");
    assert_eq!(session_diff(&one_turn, &two_turns), [] as [String; 0]);
    // The second read by the prompt's own last step (a tool call brought it), or at an extra one.
    let at_step = format!(
        "{prompt} subagent.finished {note} {read} turn/end status:idle {}",
        own_turn("")
    );
    assert_eq!(session_diff(&at_step, &two_turns), [] as [String; 0]);
    // A result that never came is a difference.
    let one_result = format!("{prompt} {answer} turn/end status:idle {}", own_turn(""));
    assert_eq!(
        session_diff(&one_result, &two_turns),
        ["agent/inbox/spliced->subagent.finished"]
    );
}

/// Seen between the release and the reference (seed 201, case 15): a `subagent_fork` child runs
/// the prompts its parent had queued when its last turn ended before its task, so how many
/// depends on when they reached the parent; what the task's turn does still counts.
#[test]
fn the_prompts_a_fork_child_inherited_are_no_difference_but_its_task_turn_is() {
    let task = |inherited: usize, reply: &str| {
        let receipt = match inherited {
            0 => RECEIPT.to_owned(),
            n => format!("{RECEIPT}@{n}"),
        };
        let mut v = format!("{receipt} status:running");
        let tool = "step/start user/message assistant/message tool/call tool/result step/end";
        // The session's first request sends its header, whichever turn that is.
        let mut header = " request/header";
        for _ in 0..inherited {
            v += &format!(
                " turn/start {CLAIM} {}",
                tool.replace(" assistant", &format!("{header} assistant"))
            );
            v += " [..] turn/end";
            header = "";
        }
        let reply = reply.replacen(" assistant", &format!("{header} assistant"), 1);
        v + &format!(" turn/start {CLAIM} step/start {reply} step/end turn/end status:idle")
    };
    let answer = "user/message assistant/message";
    assert_eq!(
        session_diff(&task(2, answer), &task(0, answer)),
        [] as [String; 0]
    );
    assert_eq!(
        session_diff(&task(1, answer), &task(2, answer)),
        [] as [String; 0]
    );
    let called = "user/message assistant/message tool/call";
    assert_eq!(
        session_diff(&task(2, called), &task(0, answer)),
        ["step/end->tool/call"]
    );
    // A receipt behind queued prompts in a session that ran turns before is not a fork's.
    let queued = format!(
        "{NEW} {RECEIPT} status:running turn/start {CLAIM} {RECEIPT}@1 {{..}} \
         turn/start {CLAIM} {{..}} status:idle"
    );
    let one = format!("{NEW} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle");
    assert_ne!(session_diff(&queued, &one), [] as [String; 0]);
}

/// Seen against the release (seed 204, case 440): a goal is blocked at its round limit once its
/// session is idle, after whichever turn ended last by then; a tool's change stays in place.
#[test]
fn after_which_turn_a_goal_is_blocked_is_no_difference_but_whether_it_was_is() {
    let turn = format!("{RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle");
    let early = format!("{NEW} {turn} goal/change {turn}");
    let late = format!("{NEW} {turn} {turn} goal/change");
    assert_eq!(session_diff(&early, &late), [] as [String; 0]);
    let never = format!("{NEW} {turn} {turn}");
    assert_eq!(session_diff(&never, &late), ["goal/change->(end)"]);
    let tool = |at: &str| {
        format!("{NEW} {RECEIPT} status:running turn/start {CLAIM} step/start {at} turn/end status:idle")
    };
    assert_eq!(
        session_diff(&tool("goal/change step/end"), &tool("step/end goal/change")),
        ["step/end->goal/change"]
    );
}

/// Seen against the release (seed 203, case 607): a session whose model requests fail (a rule
/// broke there, reported as such) spawned no subagent, which the reference's did.
#[test]
fn the_subagents_of_a_session_that_broke_a_rule_are_not_compared() {
    let child = "{{uuid#1}}".to_owned();
    let (mut s, mut r) = (Observed::default(), Observed::default());
    s.events.insert("p".into(), vec!["turn/end".into()]);
    r.events
        .insert("p".into(), vec!["tool/call".into(), "turn/end".into()]);
    r.events
        .insert(child.clone(), vec!["status:running".into()]);
    r.parents.insert(child.clone(), "p".into());
    let classes = |s: &Observed| -> Vec<String> {
        let d = compare_sessions(s, &r, &BTreeSet::new());
        d.iter().map(|f| f.class.to_string()).collect()
    };
    assert_eq!(
        classes(&s).len(),
        2,
        "the parent and its child: {:?}",
        classes(&s)
    );
    s.flagged.sessions.insert("p".into());
    assert_eq!(classes(&s), [] as [String; 0]);
}

#[test]
fn a_result_against_an_error_is_an_outcome_difference() {
    let mut a = Observed::default();
    let mut b = Observed::default();
    a.responses
        .insert("1".into(), vec![Outcome::Result("{}".into())]);
    a.methods.insert("1".into(), "shutdown".into());
    b.methods.insert("1".into(), "shutdown".into());
    b.responses.insert(
        "1".into(),
        vec![Outcome::Error {
            code: -32603,
            message: "x".into(),
        }],
    );
    let d = compare(&a, &b);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].class.to_string(), "diff:outcome:shutdown");
    assert!(compare(&a, &a).is_empty());
    // A response the subject's findings already report is not compared again.
    a.flagged.ids.insert("1".into());
    assert!(compare(&a, &b).is_empty());
}

#[test]
fn an_explained_answer_explains_the_events_and_answers_of_the_sessions_it_named() {
    let mut a = Observed::default();
    let mut b = Observed::default();
    for (o, answer) in [(&mut a, "x"), (&mut b, "y")] {
        o.methods.insert("1".into(), "session/prompt".into());
        o.responses.insert(
            "1".into(),
            vec![Outcome::Error {
                code: -32603,
                message: answer.into(),
            }],
        );
        o.request_sessions
            .entry("1".into())
            .or_default()
            .insert("s1".into());
    }
    a.events
        .insert("s1".into(), vec!["permission/preset".into()]);
    b.events.insert("s1".into(), vec!["turn/start".into()]);
    b.events.insert("s2".into(), vec!["turn/start".into()]);
    let classes = |d: Vec<Finding>| d.iter().map(|f| f.class.to_string()).collect::<Vec<_>>();
    // A later get of s1 answered differently, and one of s2.
    for (o, cwd) in [(&mut a, "/"), (&mut b, "/tmp")] {
        for (id, sid) in [("2", "s1"), ("3", "s2")] {
            o.methods
                .insert(id.into(), "session/working-directory/get".into());
            o.responses.insert(
                id.into(),
                vec![Outcome::Result(format!("{{\"cwd\":\"{cwd}\"}}"))],
            );
            o.request_sessions
                .entry(id.into())
                .or_default()
                .insert(sid.into());
        }
    }
    let all = [
        "diff:error-message:session/prompt",
        "diff:result:session/working-directory/get",
        "diff:result:session/working-directory/get",
        "diff:events:turn/start->permission/preset",
        "diff:events:turn/start->(end)",
    ];
    assert_eq!(classes(compare(&a, &b)), all);
    // Explained: s1's events and its get go, s2's (named by no explained request) stay.
    let answers = |f: &Finding| matches!(f.class, FindingClass::Diff(DiffKind::ErrorMessage, _));
    assert_eq!(
        classes(compare_explained(&a, &b, &answers)),
        [
            "diff:error-message:session/prompt",
            "diff:result:session/working-directory/get",
            "diff:events:turn/start->(end)"
        ]
    );
    let kept = compare_explained(&a, &b, &answers);
    assert!(kept[1].detail.contains("id 3"), "{}", kept[1].detail);
}

#[test]
fn of_several_answers_under_one_id_the_explained_difference_is_the_one_reported() {
    // A set and a get of s0 share an id: on the subject the set lost a race (an error) and
    // the get saw the old directory; the reference answered both with the new one.
    let mut a = Observed::default();
    let mut b = Observed::default();
    let result = |cwd: &str| Outcome::Result(format!("{{\"cwd\":\"{cwd}\"}}"));
    a.responses.insert(
        "9".into(),
        vec![
            Outcome::Error {
                code: -32603,
                message: "race".into(),
            },
            result("/"),
        ],
    );
    b.responses
        .insert("9".into(), vec![result("/tmp"), result("/tmp")]);
    for o in [&mut a, &mut b] {
        o.methods.insert(
            "9".into(),
            "session/working-directory/get+session/working-directory/set".into(),
        );
        o.request_sessions
            .entry("9".into())
            .or_default()
            .insert("s0".into());
    }
    let one = |d: Vec<Finding>| {
        assert_eq!(d.len(), 1, "{d:?}");
        d[0].class.to_string()
    };
    assert_eq!(one(compare(&a, &b)), "diff:result:<shared-id>");
    let race = |f: &Finding| f.detail.contains("race");
    let d = compare_explained(&a, &b, &race);
    assert_eq!(one(d.clone()), "diff:outcome:<shared-id>");
    assert!(race(&d[0]));
}

#[test]
fn an_ending_only_one_run_made_is_not_compared() {
    let shutdown = crate::wire::json::to_string(&serde_json::Value::from(
        super::super::sequence::SHUTDOWN_ID,
    ));
    let mut ended = Observed {
        ended: true,
        exit: Some(ExitInfo::Code(0)),
        ..Observed::default()
    };
    ended
        .responses
        .insert(shutdown.clone(), vec![Outcome::Result("{}".into())]);
    ended.methods.insert(shutdown, "shutdown".into());
    let going_on = Observed::default();
    assert!(compare(&ended, &going_on).is_empty());
    assert!(compare(&going_on, &ended).is_empty());
    // Both ended: their endings are compared.
    let other = Observed {
        ended: true,
        ..Observed::default()
    };
    let classes: Vec<String> = compare(&ended, &other)
        .iter()
        .map(|f| f.class.to_string())
        .collect();
    assert_eq!(classes, ["diff:response-presence:shutdown", "diff:exit"]);
}
