//! A session's events as the differential comparison sees them, with the orders that are races
//! of arrival times (docs/CONTRACT.md §3.5, §4, §5, §6) made one.
//!
//! The runtime writes a session's events in order (§5), but what it writes depends on when the
//! client's messages arrive relative to the session's own progress, and the fuzzer writes its
//! requests without waiting for the turns they race. What a message's arrival time decides, and
//! so what the [normal form](normal_form) leaves out of positions:
//! - a prompt's receipt lands anywhere before the turn that claims it (messages are claimed
//!   first in, first out): it is placed right before that turn's `turn/start`; one no turn
//!   claimed is counted at the end;
//! - whether a queued prompt's turn starts right after the previous `turn/end` or after an idle
//!   and a new `running` (§6): between turns only the net change of status counts (`running`
//!   before the first turn, `idle` after the last; none between two); a status inside a turn is
//!   kept where it is (idle comes after `turn/end`, §5);
//! - where a `working-directory/change` and its note land, and so who reads the note (§3.5): the
//!   next step of a running turn (an extra step when it lands in the turn's last one), or the
//!   next turn's first step, claimed right after its `turn/start`. The change and its note are
//!   counted at the end; their claims, the note and runtime-context `user/message`s they make
//!   a step read, and the extra step are left out;
//! - when a subagent's result reaches its parent (§4, §13.5): `subagent.finished` is counted at
//!   the end, and so is the notice (a message the runtime queued, not the client), whether a
//!   turn of its own claimed it (the parent was idle: that turn is left out) or it was spliced
//!   for a running turn's next step (the parent was busy: the notice's `user/message` is left
//!   out, and so is the extra step it made after an answer);
//! - the splices that cancel what is pending at end of input (§6): what was pending depends on
//!   the above;
//! - after which turn a goal is blocked at its round limit: once the session is idle, so after
//!   the last turn of the prompts that had arrived by then; a `goal/change` between turns is
//!   counted at the end (one inside a turn, a tool's, stays where it is);
//! - which prompts a `subagent_fork` child inherits (§13.5): its parent's inbox as its last
//!   turn ended, so the prompts that had reached the parent by then. The child runs them before
//!   its task, whose receipt is its first splice, at `start` N; its first N turns are left out.
//!
//! What is still compared: the session's creation, every turn of a prompt in order with its
//! steps and their events, a receipt before the turn that claims it, the net status changes
//! between turns and any status within one, and how many receipts, notices, directory changes
//! and subagent ends there were (not what a notice's turn did).
//! One branch stays: a prompt that arrives while a turn that ends in error runs stays pending
//! until the next prompt (§6), so a session may run fewer turns than another that got it after
//! the turn; see [`equivalent`].

use serde_json::Value;

/// The label of a session event for the comparison: its type, and after `#` the role the normal
/// form needs (which splice it is, which `user/message`s only a directory change makes, a turn
/// that ended in error). The role is never shown nor compared by itself.
pub fn label(ty: &str, data: &Value) -> String {
    let role = match ty {
        "agent/inbox/spliced" => splice_role(data),
        "user/message" => match data["source"]["kind"].as_str() {
            Some("working-directory") => Some("note"),
            Some("runtime-context") => Some("context"),
            Some("subagent-settled") => Some("notice"),
            _ => None,
        },
        "turn/end" => (data["reason"]["kind"] == "error").then_some("error"),
        _ => None,
    };
    match role {
        // A receipt behind messages already queued: for a fork child's first, those it inherited.
        Some("receipt") if data["start"].as_u64().is_some_and(|n| n > 0) => {
            format!("{ty}#receipt@{}", data["start"])
        }
        Some(r) => format!("{ty}#{r}"),
        None => ty.to_owned(),
    }
}

/// Which splice (§5): a prompt's receipt, a runtime notice's (a subagent's result), the claim
/// of a turn, a working-directory note, its claim by a step, a cancellation at end of input.
fn splice_role(d: &Value) -> Option<&'static str> {
    if d["outcome"] == "canceled" {
        return Some("canceled");
    }
    let inserted = d["inserted"].as_array().is_some_and(|a| !a.is_empty());
    let removed = d["removedCount"].as_u64().is_some_and(|n| n > 0);
    match (d["target"].as_str(), inserted, removed) {
        (Some("next-turn"), true, false) => match d["inserted"][0]["source"]["kind"].as_str() {
            None | Some("user") => Some("receipt"),
            Some(_) => Some("notice"),
        },
        (Some("next-turn"), false, true) => Some("claim"),
        (Some("next-step"), true, false) => match d["inserted"][0]["source"]["kind"].as_str() {
            Some("subagent-settled") => Some("notice-note"),
            _ => Some("note"),
        },
        (Some("next-step"), false, true) => Some("claim-step"),
        _ => None,
    }
}

/// Whether consecutive repeats of this label collapse into one when observed (streaming chunk
/// counts are not behaviour). Splices never do: each is one message queued, claimed or dropped,
/// and the normal form counts them.
pub fn collapses(label: &str) -> bool {
    !label.starts_with("agent/inbox/spliced")
}

/// The label as shown and compared: the event type.
pub fn shown(label: &str) -> &str {
    label.split_once('#').map_or(label, |(ty, _)| ty)
}

/// What the normal form does with an item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Status,
    /// A receipt (`true`: of a runtime notice).
    Receipt(bool),
    /// A runtime notice spliced for a running turn's next step: counted with the notices.
    NoticeNote,
    TurnStart,
    TurnEnd,
    /// A step claiming working-directory notes: marks a step the note made, then left out.
    ClaimStep,
    /// Left out: what a directory change makes a step read, cancellations at end of input.
    Dropped,
    /// Counted at the end, not placed.
    Floating,
    Fixed,
}

fn kind(label: &str) -> Kind {
    match label {
        l if l.starts_with("status:") => Kind::Status,
        "agent/inbox/spliced#receipt" => Kind::Receipt(false),
        l if l.starts_with("agent/inbox/spliced#receipt@") => Kind::Receipt(false),
        "agent/inbox/spliced#notice" => Kind::Receipt(true),
        "turn/start" => Kind::TurnStart,
        "turn/end" | "turn/end#error" => Kind::TurnEnd,
        "agent/inbox/spliced#claim-step" => Kind::ClaimStep,
        "agent/inbox/spliced#notice-note" => Kind::NoticeNote,
        "user/message#note"
        | "user/message#context"
        | "user/message#notice"
        | "agent/inbox/spliced#canceled" => Kind::Dropped,
        "working-directory/change" | "agent/inbox/spliced#note" | "subagent.finished" => {
            Kind::Floating
        }
        _ => Kind::Fixed,
    }
}

/// One turn: from its receipt (placed before it) and `turn/start` to what came before the next
/// turn, statuses between turns left out.
type Turn = Vec<String>;

/// A session's events in normal form (see the module's documentation). Two are equal when all
/// but `stalled` and `last_failed` are: they only tell [`equivalent`] whether one may have run
/// fewer turns.
#[derive(Debug, Clone)]
pub struct Normal {
    /// Before the first turn: the session's creation.
    head: Vec<String>,
    /// The turns of prompts, in order.
    turns: Vec<Turn>,
    /// The status the session was left in after its last turn, when it changed there.
    last_status: Option<String>,
    /// The runtime notices (subagents' results) the session got: their receipts, whether a
    /// turn of their own claimed them or none did, and those spliced for a running turn's next
    /// step. Which it was is a race of arrivals, so the turns they made are left out.
    notices: usize,
    /// The last turn ended in error: it stopped the queue (§6).
    last_failed: bool,
    /// Receipts of prompts no turn claimed (pending, or canceled at end of input).
    pending: usize,
    /// Of those, the ones queued before the last turn ended (during it, or behind it before it
    /// started): a turn that ends in error leaves every queued prompt pending (§6).
    stalled: usize,
    /// Directory changes, their notes and subagent ends, in that order.
    floating: Vec<String>,
}

impl PartialEq for Normal {
    fn eq(&self, o: &Self) -> bool {
        self.head == o.head
            && self.turns == o.turns
            && self.last_status == o.last_status
            && self.notices == o.notices
            && self.pending == o.pending
            && self.floating == o.floating
    }
}

impl Normal {
    /// The normal form as one list of event types, as shown in a difference.
    pub fn items(&self) -> Vec<String> {
        let mut out = self.head.clone();
        out.extend(self.turns.iter().flatten().cloned());
        out.extend(self.last_status.iter().cloned());
        let splice = "agent/inbox/spliced".to_owned();
        out.extend(std::iter::repeat_n(splice, self.pending + self.notices));
        out.extend(self.floating.iter().cloned());
        out
    }
}

/// The normal form of a session's observed labels ([`label`], consecutive repeats collapsed as
/// [`collapses`] says).
pub fn normal_form(v: &[String]) -> Normal {
    let v = &without_inherited(v)[..];
    let kinds: Vec<Kind> = v.iter().map(|l| kind(l)).collect();
    let receipts: Vec<(usize, bool)> = kinds
        .iter()
        .enumerate()
        .filter_map(|(i, k)| match k {
            Kind::Receipt(notice) => Some((i, *notice)),
            _ => None,
        })
        .collect();
    let starts: Vec<usize> = (0..v.len())
        .filter(|&i| kinds[i] == Kind::TurnStart)
        .collect();
    // Messages are claimed first in, first out: turn k claims receipt k. A receipt before its
    // turn is placed right before it; one after it stays where it was (a difference); one no
    // turn claimed is pending.
    let placed = |k: usize| receipts.get(k).filter(|(at, _)| *at < starts[k]);
    let mut moved = vec![false; v.len()];
    for k in 0..starts.len() {
        if let Some((at, _)) = placed(k) {
            moved[*at] = true;
        }
    }
    let claimed = receipts.len().min(starts.len());
    let mut notices = receipts.iter().filter(|(_, n)| *n).count();
    let pending_notices = receipts[claimed..].iter().filter(|(_, n)| *n).count();
    let pending = receipts.len() - claimed - pending_notices;
    let last_end = (0..v.len()).rev().find(|&i| kinds[i] == Kind::TurnEnd);
    let stalled = receipts[claimed..]
        .iter()
        .filter(|(at, n)| !n && Some(*at) < last_end)
        .count();
    for (at, _) in &receipts[claimed..] {
        moved[*at] = true;
    }

    let mut head = Vec::new();
    // Each turn, with whether it claimed a notice.
    let mut turns: Vec<(Turn, bool)> = Vec::new();
    let mut last_failed = false;
    let mut floating = Vec::new();
    // The session's status, and what it was when the current stretch between turns began (a new
    // session is idle).
    let mut status = "status:idle";
    let mut gap_from = Some(status);
    let mut k = 0;
    for (i, l) in v.iter().enumerate() {
        let mut item = None;
        match kinds[i] {
            Kind::Receipt(_) if moved[i] => {}
            Kind::TurnStart => {
                // Between turns only the net change of status counts.
                if gap_from.take().is_some_and(|from| from != status) {
                    push(&mut turns, &mut head, status);
                }
                let mut t = Turn::new();
                if placed(k).is_some() {
                    t.push("agent/inbox/spliced".into());
                }
                t.push(l.clone());
                turns.push((t, receipts.get(k).is_some_and(|(_, n)| *n)));
                k += 1;
            }
            Kind::TurnEnd => {
                last_failed = l.ends_with("#error");
                gap_from = Some(status);
                item = Some(l);
            }
            Kind::Status => {
                status = l;
                item = gap_from.is_none().then_some(l);
            }
            Kind::Dropped => {}
            Kind::NoticeNote => notices += 1,
            Kind::Floating => floating.push(shown(l).to_owned()),
            // A goal's change between turns is the goal's own (a block at its round limit):
            // after whichever turn ended before the session's idle, a race of arrivals.
            Kind::Fixed if gap_from.is_some() && l == "goal/change" => floating.push(l.clone()),
            _ => item = Some(l),
        }
        if let Some(l) = item {
            push(&mut turns, &mut head, l);
        }
    }
    let last_status = gap_from
        .filter(|from| *from != status)
        .map(|_| status.to_owned());
    // A change before its note, then subagent ends, then goals' changes.
    floating.sort_by_key(|l| match l.as_str() {
        "working-directory/change" => 0,
        "agent/inbox/spliced" => 1,
        "goal/change" => 3,
        _ => 2,
    });
    let prompts = (turns.into_iter())
        .filter(|(_, notice)| !notice)
        .map(|(t, _)| settle(without_note_steps(&t)))
        .collect();
    Normal {
        head: settle(head),
        turns: prompts,
        last_status,
        notices,
        last_failed,
        pending,
        stalled,
        floating,
    }
}

/// `v` without the turns of messages a fork child inherited (see the module's documentation):
/// when its first splice, before any turn, is a receipt at `start` N, its first N turns claim
/// what it inherited. Their receipts, statuses and floating items stay, and the request header
/// the first of them sent moves to the first request left, where it would be without them.
fn without_inherited(v: &[String]) -> std::borrow::Cow<'_, [String]> {
    let first_turn = v.iter().position(|l| kind(l) == Kind::TurnStart);
    let inherited = v[..first_turn.unwrap_or(0)]
        .iter()
        .find(|l| l.starts_with("agent/inbox/spliced"))
        .and_then(|l| l.strip_prefix("agent/inbox/spliced#receipt@"))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    if inherited == 0 {
        return v.into();
    }
    let (mut out, mut turns, mut header) = (Vec::with_capacity(v.len()), 0, false);
    for l in v {
        let k = kind(l);
        turns += usize::from(k == Kind::TurnStart);
        if turns == 0 || turns > inherited {
            out.push(l.clone());
            if header && l == "user/message" {
                out.push("request/header".to_owned());
                header = false;
            }
        } else if matches!(k, Kind::Receipt(_) | Kind::Status | Kind::Floating) {
            out.push(l.clone());
        } else {
            header |= l == "request/header";
        }
    }
    out.into()
}

/// Appends `l` to the last turn, or to the head before the first.
fn push(turns: &mut [(Turn, bool)], head: &mut Vec<String>, l: &str) {
    match turns.last_mut() {
        Some((t, _)) => t.push(l.to_owned()),
        None => head.push(l.to_owned()),
    }
}

/// A turn's items without the steps a working-directory note added: a step that starts by
/// claiming notes, after a step that called no tool (the model had answered: the turn would
/// have ended), and that calls none itself. A note claimed by a step that was coming anyway
/// (after a tool call) leaves its step in place.
fn without_note_steps(items: &[String]) -> Vec<String> {
    let tool = |s: &[String]| s.iter().any(|l| l == "tool/call");
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    // Where the last step of `out` started.
    let mut last_step: Option<usize> = None;
    let mut i = 0;
    while i < items.len() {
        if items[i] == "agent/inbox/spliced#claim-step"
            && items.get(i + 1).is_some_and(|l| l == "step/start")
        {
            let end = items[i..]
                .iter()
                .position(|l| l == "step/end")
                .map_or(items.len(), |e| i + e + 1);
            let after_answer = last_step.is_some_and(|s| !tool(&out[s..]));
            if after_answer && !tool(&items[i..end]) {
                i = end;
                continue;
            }
        }
        if items[i] == "step/start" {
            last_step = Some(out.len());
        }
        out.push(items[i].clone());
        i += 1;
    }
    out
}

/// Labels as shown, without the claims of notes, consecutive repeats collapsed (but for
/// splices, as when observed: what the normal form left out may have separated repeats).
fn settle(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    let mut last: Option<String> = None;
    for l in items {
        if kind(&l) == Kind::ClaimStep {
            continue;
        }
        if last.as_ref() == Some(&l) && collapses(&l) {
            continue;
        }
        out.push(shown(&l).to_owned());
        last = Some(l);
    }
    out
}

/// Whether two sessions' normal forms differ only where a prompt's arrival time decided whether
/// it ran (§6): a prompt queued while a turn that ended in error ran stays pending until the
/// next prompt, which then runs it first; with no next prompt it never runs. So one session
/// may run fewer turns than the other, when they agree on every turn it ran, its last turn
/// ended in error, as many more of its prompts are pending as it ran fewer turns, and at least
/// that many were queued before that turn ended (a prompt that reached it idle must run). All else
/// (creation, last status, notices, changes) must agree.
pub fn equivalent(a: &Normal, b: &Normal) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.turns.len() < b.turns.len() {
        (a, b)
    } else {
        (b, a)
    };
    let k = short.turns.len();
    k > 0
        && k < long.turns.len()
        && short.last_failed
        && long.turns[..k] == short.turns[..]
        && short.pending.checked_sub(long.pending) == Some(long.turns.len() - k)
        && short.stalled >= long.turns.len() - k
        && short.head == long.head
        && short.last_status == long.last_status
        && short.notices == long.notices
        && short.floating == long.floating
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_name_the_role_of_splices_messages_and_failed_turns_but_show_the_type() {
        let user = json!({"role": "user", "source": {"kind": "user"}, "content": []});
        let notice = json!({"role": "user", "source": {"kind": "subagent-settled"}});
        let note = json!({"role": "user", "source": {"kind": "working-directory"}});
        let cases = [
            (
                "agent/inbox/spliced",
                json!({"target": "next-turn", "start": 0, "inserted": [user]}),
                "agent/inbox/spliced#receipt",
            ),
            (
                "agent/inbox/spliced",
                json!({"target": "next-turn", "start": 1, "inserted": [notice]}),
                "agent/inbox/spliced#notice",
            ),
            (
                "agent/inbox/spliced",
                json!({"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []}),
                "agent/inbox/spliced#claim",
            ),
            (
                "agent/inbox/spliced",
                json!({"target": "next-step", "start": 0, "inserted": [note]}),
                "agent/inbox/spliced#note",
            ),
            (
                "agent/inbox/spliced",
                json!({"target": "next-step", "start": 0, "removedCount": 2, "inserted": []}),
                "agent/inbox/spliced#claim-step",
            ),
            (
                "agent/inbox/spliced",
                json!({"target": "next-turn", "start": 0, "removedCount": 1, "inserted": [], "outcome": "canceled"}),
                "agent/inbox/spliced#canceled",
            ),
            (
                "agent/inbox/spliced",
                json!({"target": "next-turn"}),
                "agent/inbox/spliced",
            ),
            ("user/message", note.clone(), "user/message#note"),
            (
                "user/message",
                json!({"source": {"kind": "runtime-context", "form": "snapshot"}}),
                "user/message#context",
            ),
            ("user/message", user.clone(), "user/message"),
            (
                "turn/end",
                json!({"turn": 1, "reason": {"kind": "error", "error": {}}}),
                "turn/end#error",
            ),
            (
                "turn/end",
                json!({"turn": 1, "reason": {"kind": "completed"}}),
                "turn/end",
            ),
            ("step/start", json!({"turn": 1, "step": 1}), "step/start"),
        ];
        for (ty, data, want) in cases {
            let l = label(ty, &data);
            assert_eq!(l, want, "{data}");
            assert_eq!(shown(&l), ty);
        }
        assert!(collapses("assistant/chunk") && !collapses("agent/inbox/spliced#receipt"));
    }

    #[test]
    fn receipts_are_placed_before_the_turn_that_claims_them_and_the_rest_counted() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        // A second prompt received during the first turn, a third never claimed, a directory
        // change during the second turn, a status change inside a turn (the idle after it then
        // changes nothing).
        let n = normal_form(&v(
            "permission/preset agent/inbox/spliced#receipt status:running \
            turn/start agent/inbox/spliced#claim agent/inbox/spliced#receipt step/start step/end \
            turn/end turn/start agent/inbox/spliced#claim working-directory/change \
            agent/inbox/spliced#note step/start status:idle step/end turn/end#error \
            agent/inbox/spliced#receipt status:idle",
        ));
        assert_eq!(
            n.items().join(" "),
            "permission/preset status:running agent/inbox/spliced turn/start agent/inbox/spliced \
             step/start step/end turn/end agent/inbox/spliced turn/start agent/inbox/spliced \
             step/start status:idle step/end turn/end agent/inbox/spliced \
             working-directory/change agent/inbox/spliced"
        );
        assert_eq!((n.pending, n.stalled), (1, 0));
    }
}
