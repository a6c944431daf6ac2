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
    let shutdown =
        crate::wire::json::to_string(&serde_json::Value::from(super::sequence::SHUTDOWN_ID));
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
        if flagged_tree(subject, reference, sid) || explained.contains(sid) {
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

/// Whether `sid` or a session it descends from (as either run saw its subagents start) broke a
/// rule: a subagent of a session whose turns broke one may not even exist in the other run.
fn flagged_tree(subject: &Observed, reference: &Observed, sid: &str) -> bool {
    let mut at = Some(sid);
    for _ in 0..=subject.parents.len() + reference.parents.len() {
        let Some(s) = at else { break };
        if subject.flagged.sessions.contains(s) {
            return true;
        }
        at = subject
            .parents
            .get(s)
            .or_else(|| reference.parents.get(s))
            .map(String::as_str);
    }
    false
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
        if flagged_tree(subject, reference, sid) || explained.contains(sid) {
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
#[path = "diff_tests.rs"]
mod tests;
