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

/// The sessions whose event sequences differ (but those flagged, or `explained`): where they
/// first part.
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
        let s = &normal_order(subject.events.get(sid).map_or(&[][..], Vec::as_slice));
        let r = &normal_order(reference.events.get(sid).map_or(&[][..], Vec::as_slice));
        if s == r {
            continue;
        }
        let i = s.iter().zip(r).take_while(|(a, b)| a == b).count();
        let got = s.get(i).map_or("(end)", String::as_str);
        let want = r.get(i).map_or("(end)", String::as_str);
        let before = i.checked_sub(1).and_then(|j| s.get(j)).map(String::as_str);
        if arrival_race(before, got, want) {
            continue;
        }
        out.push(Finding {
            class: FindingClass::Diff(DiffKind::Events, format!("{want}->{got}")),
            detail: format!(
                "session {sid:?}, item {i}: the runtime sent {got}, the reference {want}\n  runtime:   {}\n  reference: {}",
                clip_list(s),
                clip_list(r)
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

/// Whether the sequences part where a message's arrival time decides what comes next (§6), so
/// that neither side is wrong and what follows cannot be compared:
/// - after a `turn/end`, the next turn starts (the message was queued in time, or came after
///   the idle) or the session stays idle (it was queued during a turn that ended in error,
///   which stops the queue until the next prompt, or it had not arrived yet);
/// - after a `step/end`, the turn goes on with the message spliced as its next step, or ends,
///   or its next step starts before the message (a subagent's result) is spliced;
/// - as a turn starts, the message is spliced into it before its first step, or is not (yet).
fn arrival_race(before: Option<&str>, got: &str, want: &str) -> bool {
    let pair = |x: &str, y: &str| (got == x && want == y) || (got == y && want == x);
    match before {
        Some("turn/end") => pair("turn/start", "status:idle"),
        Some("step/end") => {
            pair("turn/end", "agent/inbox/spliced") || pair("step/start", "agent/inbox/spliced")
        }
        Some("turn/start" | "agent/inbox/spliced") => pair("agent/inbox/spliced", "step/start"),
        _ => false,
    }
}

/// A session's events with the orders that are races of arrival times made one: see
/// [`between_turns`] and [`wd_changes_last`].
fn normal_order(v: &[String]) -> Vec<String> {
    subagent_ends_last(wd_changes_last(&between_turns(v)))
}

/// Moves each `subagent.finished` to the end: a child runs beside its parent, so where its end
/// lands among the parent's later events depends on how long each one's steps take. How many
/// children finished still counts.
fn subagent_ends_last(v: Vec<String>) -> Vec<String> {
    let (mut rest, ends): (Vec<String>, Vec<String>) =
        v.into_iter().partition(|e| e != "subagent.finished");
    rest.extend(ends);
    rest
}

/// Moves each `working-directory/change` (with the `agent/inbox/spliced` that queues its notice
/// right after it) to the end: where a change requested during a turn lands among the turn's step
/// events depends on when the request arrives relative to the step's progress, in the real
/// runtime as in the reference. How many changes there were still counts.
fn wd_changes_last(v: &[String]) -> Vec<String> {
    let mut rest = Vec::with_capacity(v.len());
    let mut moved = Vec::new();
    let mut i = 0;
    while i < v.len() {
        if v[i] == "working-directory/change" {
            moved.push(v[i].clone());
            if v.get(i + 1).is_some_and(|n| n == "agent/inbox/spliced") {
                i += 1;
            }
        } else {
            rest.push(v[i].clone());
        }
        i += 1;
    }
    rest.extend(moved);
    rest
}

/// Drops status changes and receipts between a `turn/end` and the next `turn/start`: whether a
/// queued prompt's turn starts before the session reports idle is a race of arrival times.
fn between_turns(v: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(v.len());
    let mut since_end: Option<usize> = None;
    for t in v {
        match t.as_str() {
            "turn/start" => {
                if let Some(i) = since_end.take() {
                    let tail: Vec<String> = out
                        .drain(i..)
                        .filter(|x| !x.starts_with("status:") && x != "agent/inbox/spliced")
                        .collect();
                    out.extend(tail);
                }
            }
            "turn/end" => since_end = Some(out.len() + 1),
            _ => {}
        }
        // Repeats collapse, but for the splice after a working-directory note's own (see the
        // observation's collapse).
        let after_note = out.len() >= 2 && out[out.len() - 2] == "working-directory/change";
        if out.last() != Some(t) || after_note {
            out.push(t.clone());
        }
    }
    out
}

fn show(o: &Outcome) -> String {
    match o {
        Outcome::Result(r) => format!("result {}", crate::trace::explain::clip(r, 200)),
        Outcome::Error { code, message } => format!("error {code} {message:?}"),
    }
}

fn clip_list(v: &[String]) -> String {
    let mut s = v.iter().take(24).cloned().collect::<Vec<_>>().join(" ");
    if v.len() > 24 {
        s.push_str(&format!(" … ({} items)", v.len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn session_diff(subject: &[&str], reference: &[&str]) -> Vec<Finding> {
        let (mut s, mut r) = (Observed::default(), Observed::default());
        s.events.insert("s1".into(), events(subject));
        r.events.insert("s1".into(), events(reference));
        compare_sessions(&s, &r, &BTreeSet::new())
    }

    #[test]
    fn where_a_message_lands_by_its_arrival_time_is_no_difference_but_a_lost_turn_is() {
        let head = [
            "status:running",
            "turn/start",
            "agent/inbox/spliced",
            "step/start",
        ];
        let ended = [&head[..], &["step/end", "turn/end", "status:idle"]].concat();
        let queued = [
            &head[..],
            &["step/end", "turn/end", "turn/start", "step/start"],
        ]
        .concat();
        let spliced = [
            &head[..],
            &["step/end", "agent/inbox/spliced", "step/start"],
        ]
        .concat();
        assert!(session_diff(&ended, &queued).is_empty());
        assert!(session_diff(&queued, &ended).is_empty());
        assert!(session_diff(&spliced, &ended).is_empty());
        assert!(session_diff(&ended, &spliced).is_empty());
        let next_first = [
            &head[..],
            &["step/end", "step/start", "agent/inbox/spliced"],
        ]
        .concat();
        assert!(session_diff(&next_first, &spliced).is_empty());
        // Not races: a turn with no end, a turn that never started, an idle in mid-step.
        let unended = [&head[..], &["step/end", "status:idle"]].concat();
        assert_eq!(session_diff(&unended, &ended).len(), 1);
        let unstarted = ["status:running", "status:idle"];
        assert_eq!(session_diff(&unstarted, &ended).len(), 1);
        let early_idle = [&head[..], &["status:idle"]].concat();
        assert_eq!(session_diff(&early_idle, &ended).len(), 1);
        // A message spliced into a starting turn, or not.
        let claimed = [
            "turn/start",
            "agent/inbox/spliced",
            "agent/inbox/spliced",
            "step/start",
        ];
        assert!(session_diff(
            &claimed,
            &["turn/start", "agent/inbox/spliced", "step/start"]
        )
        .is_empty());
    }

    #[test]
    fn where_a_subagent_ends_among_its_parents_events_is_no_difference_but_how_many_end_is() {
        let early = [
            "tool/call",
            "subagent.started",
            "subagent.finished",
            "step/end",
            "step/start",
        ];
        let late = [
            "tool/call",
            "subagent.started",
            "step/end",
            "step/start",
            "subagent.finished",
        ];
        assert!(session_diff(&early, &late).is_empty());
        let never = ["tool/call", "subagent.started", "step/end", "step/start"];
        assert_eq!(session_diff(&never, &late).len(), 1);
    }

    #[test]
    fn a_queued_turn_may_start_before_or_after_idle() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let direct = v("turn/start step/start turn/end turn/start step/start turn/end status:idle");
        let via_idle = v("turn/start step/start turn/end status:idle agent/inbox/spliced status:running turn/start step/start turn/end status:idle");
        assert_eq!(between_turns(&direct), between_turns(&via_idle));
        // Idle before turn/end stays visible.
        let early = v("turn/start step/start status:idle turn/end");
        assert_ne!(
            between_turns(&early),
            v("turn/start step/start turn/end status:idle")
        );
    }

    #[test]
    fn a_working_directory_change_may_land_before_or_inside_a_step() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let before = v(
            "turn/start working-directory/change agent/inbox/spliced step/start step/end turn/end",
        );
        let inside = v(
            "turn/start step/start working-directory/change agent/inbox/spliced step/end turn/end",
        );
        assert_eq!(normal_order(&before), normal_order(&inside));
        // A change that did not happen, or happened twice, still differs.
        let none = v("turn/start step/start step/end turn/end");
        assert_ne!(normal_order(&before), normal_order(&none));
        let twice = v("turn/start working-directory/change agent/inbox/spliced step/start working-directory/change step/end turn/end");
        assert_ne!(normal_order(&before), normal_order(&twice));
        // A change made just before a prompt keeps the prompt's own splice in place.
        let idle = v("working-directory/change agent/inbox/spliced agent/inbox/spliced status:running turn/start");
        assert_eq!(
            normal_order(&idle),
            v("agent/inbox/spliced status:running turn/start working-directory/change")
        );
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
