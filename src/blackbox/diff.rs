//! Differential comparison of two runs of the same sequence.
//!
//! Both runs are already normalised ([`super::exec::Observed`]): responses by method and id echo
//! (error messages with directories, uuids and method names replaced), per-session event-type
//! sequences with uuid sessions numbered by appearance and streaming repeats collapsed, and exit
//! status. Results compare as normalised JSON. Each difference gets a class (`diff:<kind>:<what>`) so that one cause is one finding.
//! What the subject's own findings already report ([`super::exec::Flagged`]: ids and sessions whose
//! frames broke a stream rule, a broken ending) is left out, so one cause is not reported twice and
//! a class the runtime has everywhere (say, non-compact output) does not hide the differences.
//! Known, justified differences are the [`super::allowlist`]'s.

use super::class::{DiffKind, FindingClass};
use super::events;
use super::exec::{Observed, Outcome};
use super::Finding;
use crate::trace::ExitInfo;
use std::collections::{BTreeMap, BTreeSet};

/// Every classified difference between `subject` and `reference`.
pub fn compare(subject: &Observed, reference: &Observed) -> Vec<Finding> {
    compare_explained(subject, reference, &|_| false)
}

/// [`compare`], where a difference in how a request was answered that `explained` accepts (an
/// allowlisted cause, say a race of timing) also explains the sessions the request named: their
/// event sequences are not compared, nor the answers of other requests that named only such
/// sessions (the cause that changed the answer changed the session's state too: a change of
/// directory that lost a race leaves every later `get` of that session different). Answers are
/// kept by id, not by time, so an answer about such a session given before the race is not
/// compared either.
pub fn compare_explained(
    subject: &Observed,
    reference: &Observed,
    explained: &dyn Fn(&Finding) -> bool,
) -> Vec<Finding> {
    // An ending is compared only when both runs made one: on shared processes a run that did
    // not settle ends its process while the other run's process goes on to the next sequence.
    let both_ended = subject.ended && reference.ended;
    let (mut out, explained_sessions) = compare_answers(subject, reference, both_ended, explained);
    out.extend(compare_sessions(subject, reference, &explained_sessions));
    out.extend(compare_tool_results(
        subject,
        reference,
        &explained_sessions,
    ));
    if both_ended && subject.exit != reference.exit && !subject.flagged.exit {
        let exit = |e: Option<ExitInfo>| e.map_or("no exit".to_owned(), |e| e.to_string());
        out.push(Finding {
            class: FindingClass::Diff(DiffKind::Exit, String::new()),
            detail: format!(
                "the runtime: {}, the reference: {}",
                exit(subject.exit),
                exit(reference.exit)
            ),
        });
    }
    out
}

/// The keys of either map, in order.
fn union_keys<'a, V>(a: &'a BTreeMap<String, V>, b: &'a BTreeMap<String, V>) -> Vec<&'a String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The differences in how requests were answered, but those that follow from an explained one
/// (see [`compare_explained`]); and the sessions the explained ones named.
fn compare_answers<'a>(
    subject: &'a Observed,
    reference: &'a Observed,
    both_ended: bool,
    explained: &dyn Fn(&Finding) -> bool,
) -> (Vec<Finding>, BTreeSet<&'a String>) {
    // Answer differences with the sessions their request named, judged once all are known.
    let mut answers: Vec<(Finding, Vec<&String>)> = Vec::new();
    let mut explained_sessions = BTreeSet::new();
    let shutdown = crate::wire::json::to_string(&serde_json::Value::from(super::gen::SHUTDOWN_ID));
    for k in union_keys(&subject.responses, &reference.responses) {
        if subject.flagged.ids.contains(k) || (!both_ended && *k == shutdown) {
            continue;
        }
        let Some(f) = answer_difference(subject, reference, k, explained) else {
            continue;
        };
        let named: Vec<&String> = [subject, reference]
            .into_iter()
            .filter_map(|o| o.request_sessions.get(k))
            .flatten()
            .collect();
        if explained(&f) {
            explained_sessions.extend(named.iter().copied());
        }
        answers.push((f, named));
    }
    let out = answers
        .into_iter()
        .filter(|(f, named)| {
            let consequence = !named.is_empty()
                && !explained(f)
                && named.iter().all(|sid| explained_sessions.contains(sid));
            !consequence
        })
        .map(|(f, _)| f)
        .collect();
    (out, explained_sessions)
}

/// How the answers to the requests of id `k` differ, if they do: how many there were, else
/// one differing answer (one the allowlist explains if there is one: the others then follow
/// from it; else the first).
fn answer_difference(
    subject: &Observed,
    reference: &Observed,
    k: &str,
    explained: &dyn Fn(&Finding) -> bool,
) -> Option<Finding> {
    let method = reference
        .methods
        .get(k)
        .or_else(|| subject.methods.get(k))
        .map_or("<other>", String::as_str);
    // Ids shared by requests of several methods form one class of their own.
    let method = if method.contains('+') {
        "<shared-id>"
    } else {
        method
    };
    let mut s = subject.responses.get(k).cloned().unwrap_or_default();
    let mut r = reference.responses.get(k).cloned().unwrap_or_default();
    if s.len() != r.len() {
        return Some(Finding {
            class: FindingClass::Diff(DiffKind::ResponsePresence, method.into()),
            detail: format!(
                "{method} id {k}: the runtime answered {} time(s), the reference {} time(s)",
                s.len(),
                r.len()
            ),
        });
    }
    // Requests sharing an id: drop the answers both gave, compare what is left.
    s.retain(|a| match r.iter().position(|b| b == a) {
        Some(i) => {
            r.remove(i);
            false
        }
        None => true,
    });
    s.sort();
    r.sort();
    let mut pairs: Vec<Finding> = s
        .iter()
        .zip(&r)
        .filter_map(|(a, b)| {
            let kind = outcome_difference(a, b)?;
            Some(Finding {
                class: FindingClass::Diff(kind, method.into()),
                detail: format!(
                    "{method} id {k}: the runtime answered {}, the reference {}",
                    show(a),
                    show(b)
                ),
            })
        })
        .collect();
    let chosen = pairs.iter().position(explained).unwrap_or(0);
    (chosen < pairs.len()).then(|| pairs.swap_remove(chosen))
}

/// How answer `a` differs from answer `b`, if it does.
fn outcome_difference(a: &Outcome, b: &Outcome) -> Option<DiffKind> {
    match (a, b) {
        (Outcome::Result(x), Outcome::Result(y)) if x == y => None,
        (Outcome::Result(_), Outcome::Result(_)) => Some(DiffKind::Result),
        (Outcome::Result(_), _) | (_, Outcome::Result(_)) => Some(DiffKind::Outcome),
        (Outcome::Error { code: c1, .. }, Outcome::Error { code: c2, .. }) if c1 != c2 => {
            Some(DiffKind::ErrorCode)
        }
        (Outcome::Error { message: m1, .. }, Outcome::Error { message: m2, .. }) if m1 != m2 => {
            Some(DiffKind::ErrorMessage)
        }
        _ => None,
    }
}

/// The sessions whose event sequences differ (but those flagged, or `explained`) in their normal
/// form ([`events::normal_form`]: the orders that are races of arrival times made one), and
/// not only where a prompt's arrival decided whether it ran ([`events::equivalent`]): where
/// they first part.
fn compare_sessions(
    subject: &Observed,
    reference: &Observed,
    explained: &BTreeSet<&String>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for sid in union_keys(&subject.events, &reference.events) {
        if subject.flagged.sessions.contains(sid) || explained.contains(sid) {
            continue;
        }
        let normal =
            |o: &Observed| events::normal_form(o.events.get(sid).map_or(&[][..], Vec::as_slice));
        let (ns, nr) = (normal(subject), normal(reference));
        if events::equivalent(&ns, &nr) {
            continue;
        }
        let (s, r) = (&ns.items(), &nr.items());
        if s == r {
            continue; // the same items, parted otherwise (a pending receipt, a note)
        }
        let i = s.iter().zip(r).take_while(|(a, b)| a == b).count();
        let got = s.get(i).map_or("(end)", String::as_str);
        let want = r.get(i).map_or("(end)", String::as_str);
        out.push(Finding {
            class: FindingClass::Diff(DiffKind::Events, format!("{want}->{got}")),
            detail: format!(
                "session {sid:?}, item {i}: the runtime sent {got}, the reference {want}\n  runtime:   {}\n  reference: {}",
                window(s, i),
                window(r, i)
            ),
        });
    }
    out
}

/// The sessions whose tool results differ in text (but those flagged, or `explained`): the
/// first differing result of each (results only one side has are the events' difference).
fn compare_tool_results(
    subject: &Observed,
    reference: &Observed,
    explained: &BTreeSet<&String>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (sid, s) in &subject.tool_results {
        if subject.flagged.sessions.contains(sid) || explained.contains(sid) {
            continue;
        }
        let r = reference
            .tool_results
            .get(sid)
            .map_or(&[][..], Vec::as_slice);
        let Some((i, (a, b))) = s.iter().zip(r).enumerate().find(|(_, (a, b))| a != b) else {
            continue;
        };
        let tool = if a.0 == b.0 {
            a.0.clone()
        } else {
            format!("{}|{}", b.0, a.0)
        };
        out.push(Finding {
            class: FindingClass::Diff(DiffKind::ToolResult, tool),
            detail: format!(
                "session {sid:?}, tool result {i} ({}): the runtime said {:?}, the reference {:?}",
                a.0,
                clip(&a.1),
                clip(&b.1)
            ),
        });
    }
    out
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

fn show(o: &Outcome) -> String {
    match o {
        Outcome::Result(r) => format!("result {}", crate::trace::explain::clip(r, 200)),
        Outcome::Error { code, message } => format!("error {code} {message:?}"),
    }
}

/// The items around `at` (where two runs part): up to 12 before and 12 from it on, with how
/// many are left out before and how many there are in all.
fn window(v: &[String], at: usize) -> String {
    let start = at.saturating_sub(12);
    let end = at.saturating_add(12).min(v.len());
    let mut s = String::new();
    if start > 0 {
        s.push_str(&format!("… ({start} items) "));
    }
    s.push_str(&v.get(start..end).unwrap_or_default().join(" "));
    if end < v.len() {
        s.push_str(&format!(" … ({} items)", v.len()));
    }
    s
}

#[cfg(test)]
mod tests {
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
        let lost = format!(
            "{NEW} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle {RECEIPT}"
        );
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
        let tail = "session-log-deepseek/delivery-accepted assistant/message step/end turn/end status:idle";
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
        let stalled = format!(
            "{NEW} {RECEIPT} status:running turn/start {CLAIM} {RECEIPT} {failed} status:idle"
        );
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
        let ran_both =
            format!("{ran} {RECEIPT} status:running turn/start {CLAIM} {{..}} status:idle");
        assert_eq!(session_diff(&resumed, &ran_both), [] as [String; 0]);
        // Not a stall: the prompt reached the session idle, or the turn did not fail.
        let ignored = format!(
            "{NEW} {RECEIPT} status:running turn/start {CLAIM} {failed} status:idle {RECEIPT}"
        );
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
        let answers =
            |f: &Finding| matches!(f.class, FindingClass::Diff(DiffKind::ErrorMessage, _));
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
        let shutdown =
            crate::wire::json::to_string(&serde_json::Value::from(super::super::gen::SHUTDOWN_ID));
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
}
