//! Which cases may share a warm runtime process, and how their ids are kept apart (issue 38).
//!
//! A runtime slow to boot pays its boot once per case on fresh processes. A case whose rule does
//! not depend on the process's state may instead run on a process that earlier cases of the same
//! job used ([`crate::runner::Warm`]). Verdicts must not change, so sharing is only ever a faster
//! way to a PASS: a case that does not pass cleanly on a shared process (any failure, any finding
//! about another rule, any line of another case in its transcript) is run again, alone, on a
//! fresh process, and that run is the one judged.
//!
//! What a case needs in order to share (computed from its trace, [`shareable`]):
//! - its check is not about the process itself ([`about_the_process`]);
//! - its first two steps are the initialize request and its answer (the process's, run once),
//!   and it sends no other initialize request;
//! - no end of input, signal or exit; its bytes end on a line's end (the next case's first
//!   line is a line of its own);
//! - literal session ids only, plain ones;
//! - nothing of its own: no `# env:`, no `# continues:`, not continued by another case, not
//!   setup-only.
//!
//! Its names are kept apart from the other cases' of the process in one of two ways
//! ([`Sharing`]): renamed with a prefix of its own ([`renamed`]), or, when renaming would change
//! what it tests or cannot reach every name (numeric, null or odd ids, ids split over writes or
//! of invalid bytes), kept as written on a process where none of them was used ([`Used`]).

use super::cases::CheckCase;
use crate::check::CheckId;
use crate::trace::{Send, StepKind, Trace};
use crate::wire::output::{Frame, Output};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

/// Checks that always get a fresh process: rules about the process's start, life and end,
/// about resuming across processes, about subagents (judged from the model stub's log, which is
/// per process), and about session ids as data (the runtime's storage, per process).
const PROCESS_RULES: &[&str] = &[
    "initialize.",
    "lifecycle.",
    "resume.",
    "subagent.",
    "session.ids-are-data",
];

/// Checks about how ids are echoed or treated: renaming would change what they test, so they
/// share as written ([`Sharing::Literal`]).
const ID_RULES: &[&str] = &[
    "frame.id-",
    "frame.lone-surrogates-",
    "response.id-type-preserved",
];

/// The boot (the preflight's `initialize`) from which `--processes auto` shares processes: over
/// three times what the test bed's Python runtimes take, so that a loaded machine does not turn
/// sharing on for runtimes that start in a blink (the release takes 1.1–1.5 s, the reference a
/// few ms).
pub const SHARE_FROM: Duration = Duration::from_millis(500);

/// Cases one shared process serves at most (a long-lived process accumulates state).
pub const MAX_CASES_PER_PROCESS: usize = 32;

/// The shared processes `cases` shareable cases start over `jobs` jobs, when each passes
/// cleanly (a plan's least: one per job that gets one, and one per [`MAX_CASES_PER_PROCESS`]).
pub fn processes_for(cases: usize, jobs: usize) -> usize {
    cases
        .min(jobs.max(1))
        .max(cases.div_ceil(MAX_CASES_PER_PROCESS))
}

/// How checks use runtime processes (`check --processes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Processes {
    /// Every case on a fresh process of its own (the behaviour before issue 38).
    Fresh,
    /// The cases that may share a process do ([`shareable`]); the rest get fresh ones.
    Shared,
    /// `Shared` for a runtime whose boot took [`SHARE_FROM`] or more, else `Fresh`.
    #[default]
    Auto,
}

impl Processes {
    /// Whether cases share processes, given the preflight's boot.
    pub fn shares(self, boot: Duration) -> bool {
        match self {
            Processes::Fresh => false,
            Processes::Shared => true,
            Processes::Auto => boot >= SHARE_FROM,
        }
    }
}

/// The cases that may share a process (by file), and how ([`shareable`]).
pub type Eligible = std::collections::HashMap<&'static str, Sharing>;

/// How a case's names are kept apart from those of the other cases of its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Its request ids and session ids renamed with a prefix of its own ([`renamed`]).
    Renamed,
    /// As written, on a process where none of its names was used before ([`Used::free`]), its
    /// lines then naming none used before it ([`Used::own_lines`]).
    Literal,
}

/// Where a case ran (the JSON report's `ran_in`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RanIn {
    /// On a fresh process of its own.
    Fresh,
    /// On shared process `process` (numbered in the run), its `nth` case.
    Shared {
        /// The process's number.
        process: u64,
        /// Which of its cases (1-based, after its initialize).
        nth: usize,
    },
    /// On a fresh process, after a run on shared process `process` that did not pass cleanly
    /// (that run is not judged).
    FreshAgain {
        /// The shared process's number.
        process: u64,
    },
}

impl std::fmt::Display for RanIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RanIn::Fresh => f.write_str("fresh"),
            RanIn::Shared { process, nth } => write!(f, "shared process {process}, case {nth}"),
            RanIn::FreshAgain { process } => write!(
                f,
                "fresh, after not passing cleanly on shared process {process}"
            ),
        }
    }
}

/// How `case` may run on a shared process, if it may (see the module's doc). `continued`: the
/// cases that another continues (they need directories of their own: [`continued`]).
pub fn shareable(case: &CheckCase, continued: &BTreeSet<String>) -> Option<Sharing> {
    if about_the_process(case.check.id) || case.setup_only {
        return None;
    }
    let t = case.trace(false).ok()?;
    let alone = continued.contains(&t.meta.case) || t.meta.continues.is_some();
    if alone || !t.meta.env.is_empty() {
        return None;
    }
    let (ids, sessions) = names(&t);
    let fits = starts_with_initialize(&t)
        && t.steps[2..].iter().all(|s| step_fits(&s.kind))
        && ends_on_a_line(&t)
        && sessions.iter().all(|n| plain(n));
    if !fits {
        return None;
    }
    let id_rule = ID_RULES
        .iter()
        .any(|p| case.check.id.as_str().starts_with(p));
    if !id_rule && renameable(&t) && ids.iter().all(|n| plain(n)) {
        return Some(Sharing::Renamed);
    }
    // As written: its names must not look like another case's renamed ones.
    (!ids.iter().chain(&sessions).any(|n| looks_renamed(n))).then_some(Sharing::Literal)
}

/// The cases of `all` that another case continues (`# continues:`).
pub fn continued(all: &[CheckCase]) -> BTreeSet<String> {
    (all.iter().filter_map(|c| c.trace(false).ok()))
        .filter_map(|t| t.meta.continues)
        .collect()
}

/// The trace's first step sends the `initialize` request and its second expects the answer; no
/// later step sends another `initialize` request (a notification of that name is data).
fn starts_with_initialize(t: &Trace) -> bool {
    let init = |k: &StepKind, request: bool| match k {
        StepKind::Send(Send::Frame { text, id, .. }) => {
            (id.is_some() || !request)
                && sent_json(text)
                    .is_some_and(|v| v.get("method").and_then(Value::as_str) == Some("initialize"))
        }
        _ => false,
    };
    t.steps.len() > 2
        && init(&t.steps[0].kind, true)
        && matches!(t.steps[1].kind, StepKind::Expect(_))
        && !t.steps[2..].iter().any(|s| init(&s.kind, true))
}

/// A step a shared process may be given: frames (literal session ids only), raw bytes, pauses,
/// expectations.
fn step_fits(k: &StepKind) -> bool {
    match k {
        StepKind::Send(Send::Frame { text, .. }) => match sent_json(text) {
            Some(v) => {
                let sid = v.pointer("/params/sessionId");
                sid.is_none_or(|s| s.as_str().is_some_and(|s| !s.contains("{{")))
            }
            None => false,
        },
        StepKind::Send(Send::Raw(_) | Send::Pause(_)) | StepKind::Expect(_) => true,
        StepKind::Send(Send::Eof | Send::Signal(_)) | StepKind::Exit(_) => false,
    }
}

/// The case's last bytes end a line (a frame is sent with its `\n`), so the next case's first
/// line is not joined to its last.
fn ends_on_a_line(t: &Trace) -> bool {
    let last = (t.steps.iter().rev()).find_map(|s| match &s.kind {
        StepKind::Send(Send::Frame { .. }) => Some(true),
        StepKind::Send(Send::Raw(b)) => Some(b.ends_with(b"\n")),
        _ => None,
    });
    last.unwrap_or(true)
}

/// Whether [`renamed`] reaches every name the trace's sends give: string ids only, raw bytes
/// of UTF-8 whose every `"id":"` string is closed in the same send (a name split over writes,
/// or of invalid bytes, is not found).
fn renameable(t: &Trace) -> bool {
    t.steps.iter().all(|s| match &s.kind {
        StepKind::Send(Send::Frame { id, .. }) => id.as_ref().is_none_or(|i| i.starts_with('"')),
        StepKind::Send(Send::Raw(b)) => std::str::from_utf8(b)
            .is_ok_and(|text| text.split(r#""id":""#).skip(1).all(|p| p.contains('"'))),
        _ => true,
    })
}

/// Whether `name` has the shape of a renamed one (`k3-…`).
fn looks_renamed(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('k') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with('-')
}

/// A sent frame's JSON (the kit's parser: some sends hold lone surrogates on purpose).
fn sent_json(text: &str) -> Option<Value> {
    crate::wire::json::parse(text).ok().map(|p| p.value)
}

/// The names a case's sends give, as `(ids, sessions)`: their string request ids (a raw
/// send's too, `"id":"…"` in its bytes) and their session ids.
pub type Names = (BTreeSet<String>, BTreeSet<String>);

/// The names `t`'s sends give ([`Names`]).
pub fn names(t: &Trace) -> Names {
    let (mut ids, mut sessions) = (BTreeSet::new(), BTreeSet::new());
    for s in &t.steps {
        match &s.kind {
            StepKind::Send(Send::Raw(b)) => {
                let text = String::from_utf8_lossy(b);
                for part in text.split(r#""id":""#).skip(1) {
                    ids.extend(part.split('"').next().map(str::to_owned));
                }
            }
            StepKind::Send(Send::Frame { text, .. }) => {
                let Some(v) = sent_json(text) else { continue };
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    ids.insert(id.to_owned());
                }
                if let Some(s) = v.pointer("/params/sessionId").and_then(Value::as_str) {
                    sessions.insert(s.to_owned());
                }
            }
            _ => {}
        }
    }
    (ids, sessions)
}

/// Whether a name may be renamed: plain, so that the renamed one is as plain (an empty or odd
/// session id is what some checks are about).
fn plain(name: &str) -> bool {
    !name.is_empty()
        && (name.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `text` (a trace) with every request id and session id its sends give renamed to
/// `<prefix><name>`, wherever the quoted name stands as a whole JSON string in a send, an
/// expectation or an `ignore` line (and as an escaped string in a `>>raw` line); a session id
/// also where an expectation's string quotes it as a word (`unknown SDK session: s1`). The cases
/// of one process then never meet in a session or an id. Anything the renaming misses makes the
/// case fail on the shared process, and it runs again on a fresh one.
pub fn renamed(text: &str, (ids, sessions): &Names, prefix: &str) -> String {
    let to = |n: &String| format!("{prefix}{n}");
    let whole: Vec<(String, String)> = (ids.iter().chain(sessions))
        .map(|n| (quote(n), quote(&to(n))))
        .collect();
    let words: Vec<(String, String)> = sessions.iter().map(|n| (n.clone(), to(n))).collect();
    let mut out = String::with_capacity(text.len() + 64);
    for l in text.lines() {
        if l.starts_with(">>raw ") {
            let mut r = l.to_owned();
            for n in ids {
                r = r.replace(&format!(r#"\"{n}\""#), &format!(r#"\"{}\""#, to(n)));
            }
            out.push_str(&r);
        } else if l.starts_with(">>") || l.starts_with("ignore ") {
            out.push_str(&rename_line(l, &whole, &[]));
        } else if l.starts_with("<<") {
            out.push_str(&rename_line(l, &whole, &words));
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    out
}

/// `l` with each whole quoted string `whole.0` replaced by `whole.1`, and inside other strings
/// each word `words.0` by `words.1` (one pass, left to right: a replacement is never renamed
/// again).
fn rename_line(l: &str, whole: &[(String, String)], words: &[(String, String)]) -> String {
    let mut out = String::with_capacity(l.len() + 32);
    let mut rest = l;
    'scan: while !rest.is_empty() {
        for (from, to) in whole {
            if let Some(after) = rest.strip_prefix(from.as_str()) {
                out.push_str(to);
                rest = after;
                continue 'scan;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        rest = &rest[c.len_utf8()..];
        // Inside a string, to its end: a quote there closes it, it does not open a name.
        if c == '"' {
            let mut escaped = false;
            let end = rest.char_indices().find(|&(_, ch)| {
                let close = ch == '"' && !escaped;
                escaped = ch == '\\' && !escaped;
                close
            });
            let Some((i, _)) = end else {
                out.push_str(rest);
                break;
            };
            out.push_str(&rename_words(&rest[..=i], words));
            rest = &rest[i + 1..];
        }
    }
    out
}

/// `s` with each of `words`' names that stands as a word (no name character either side)
/// replaced.
fn rename_words(s: &str, words: &[(String, String)]) -> String {
    let inner = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    'scan: while i < s.len() {
        let before = s[..i].chars().next_back();
        for (from, to) in words {
            if s[i..].starts_with(from.as_str())
                && !inner(before)
                && !inner(s[i + from.len()..].chars().next())
            {
                out.push_str(to);
                i += from.len();
                continue 'scan;
            }
        }
        let Some(c) = s[i..].chars().next() else {
            break;
        };
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Whether a shared case's own lines (its transcript after the process's `head` lines) name
/// only its own ids and sessions (those renamed with `prefix`): a line of an earlier case voids
/// the run, which then runs again on a fresh process.
pub fn only_own_lines(stdout: &[Output], head: usize, prefix: &str) -> bool {
    let own = quote(prefix);
    let own = &own[..own.len() - 1]; // `"k3-`: the start of an own id's JSON text
                                     // A `null` id answers a line that could not be read: the runtime answered it before it
                                     // read the barrier that ended the case before.
    stdout.iter().skip(head).all(|o| match o.frame() {
        Frame::Response { id, .. } => id.starts_with(own) || id == "null",
        Frame::Notification {
            session: Some(s), ..
        } => s.starts_with(prefix),
        _ => true,
    })
}

/// The request ids (as JSON text) and session ids a shared process has met so far: sent by its
/// cases, or named by its lines. A case sharing as written ([`Sharing::Literal`]) runs only
/// where none of its names is among them, and its run counts only when none of its lines names
/// one (a late line of an earlier case).
#[derive(Debug, Default)]
pub struct Used {
    ids: HashSet<String>,
    sessions: HashSet<String>,
}

impl Used {
    /// Whether none of the names `t`'s sends give was met before.
    pub fn free(&self, t: &Trace) -> bool {
        let (ids, sessions) = sent_names(t);
        !ids.iter().any(|i| self.ids.contains(i))
            && !sessions.iter().any(|s| self.sessions.contains(s))
    }

    /// Whether the lines after the process's `head` name no id or session met before (a `null`
    /// id answers a line that could not be read: see [`only_own_lines`]).
    pub fn own_lines(&self, stdout: &[Output], head: usize) -> bool {
        stdout.iter().skip(head).all(|o| match o.frame() {
            Frame::Response { id, .. } => id == "null" || !self.ids.contains(id),
            Frame::Notification {
                session: Some(s), ..
            } => !self.sessions.contains(s),
            _ => true,
        })
    }

    /// Adds the names `t`'s sends give and those its lines after `head` name.
    pub fn record(&mut self, t: &Trace, stdout: &[Output], head: usize) {
        let (ids, sessions) = sent_names(t);
        self.ids.extend(ids);
        self.sessions.extend(sessions);
        for o in stdout.iter().skip(head) {
            match o.frame() {
                Frame::Response { id, .. } if id != "null" => _ = self.ids.insert(id.clone()),
                Frame::Notification {
                    session: Some(s), ..
                } => _ = self.sessions.insert(s.clone()),
                _ => {}
            }
        }
    }
}

/// The names `t`'s sends give: ids as JSON text, as a line's [`Frame::Response`] names them
/// (any type but `null`; a raw send's string ids too), sessions as strings.
fn sent_names(t: &Trace) -> Names {
    use crate::wire::json::to_string;
    let (strings, sessions) = names(t);
    let mut ids: BTreeSet<String> = (strings.into_iter())
        .map(|s| to_string(&Value::String(s)))
        .collect();
    for s in &t.steps {
        if let StepKind::Send(Send::Frame { text, .. }) = &s.kind {
            let id = sent_json(text).and_then(|v| v.get("id").cloned());
            ids.extend(id.filter(|id| !id.is_null()).map(|id| to_string(&id)));
        }
    }
    (ids, sessions)
}

/// Whether check `id` is about the process itself (never shared).
pub fn about_the_process(id: CheckId) -> bool {
    PROCESS_RULES.iter().any(|p| id.as_str().starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_sessions_are_renamed_as_whole_strings_only() {
        let t = concat!(
            "# check: x\n",
            "ignore {\"id\":\"p1\"}\n",
            ">> {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"contentBlocks\":[{\"type\":\"text\",\"text\":\"s1\"}]}}\n",
            "<< {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"error\":{\"message\":\"busy: s1 \\\"s1\\\"\"}}\n",
        );
        let r = renamed(t, &names(&Trace::parse(t, "t").unwrap()), "k7-");
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[0], "# check: x");
        assert_eq!(lines[1], "ignore {\"id\":\"k7-p1\"}");
        // The text block holding exactly a name is renamed too (it is the same JSON string).
        assert!(lines[2].contains("\"id\":\"k7-p1\""), "{}", lines[2]);
        assert!(lines[2].contains("\"sessionId\":\"k7-s1\""), "{}", lines[2]);
        // Inside a longer string of an expectation, a session id as a word is renamed (the
        // runtime quotes the id it was given); a request id is not.
        assert!(
            lines[3].ends_with("\"message\":\"busy: k7-s1 \\\"k7-s1\\\"\"}}"),
            "{}",
            lines[3]
        );
        assert!(lines[3].contains("\"id\":\"k7-p1\""));
        let t = concat!(
            ">> {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"session/wait\",\"params\":{\"sessionId\":\"s1\"}}\n",
            ">>raw \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":\\\"cr1\\\"}\\r\\n\"\n",
            "<< {\"id\":\"cr1\",\"error\":{\"message\":\"p1 s10 xs1 s1.\"}}\n",
        );
        let r = renamed(t, &names(&Trace::parse(t, "t").unwrap()), "k2-");
        let lines: Vec<&str> = r.lines().collect();
        assert!(
            lines[1].contains("\\\"id\\\":\\\"k2-cr1\\\""),
            "{}",
            lines[1]
        );
        // Words that only contain a session id, and request ids, stay.
        assert!(
            lines[2].contains("\"message\":\"p1 s10 xs1 s1.\""),
            "{}",
            lines[2]
        );
        assert!(lines[2].contains("\"id\":\"k2-cr1\""), "{}", lines[2]);
    }

    #[test]
    fn shared_cases_start_a_process_per_job_and_per_thirty_two() {
        assert_eq!(processes_for(0, 2), 0);
        assert_eq!(processes_for(1, 2), 1);
        assert_eq!(processes_for(38, 2), 2);
        assert_eq!(processes_for(100, 2), 4);
    }

    #[test]
    fn auto_shares_from_half_a_second_of_boot() {
        let ms = Duration::from_millis;
        assert!(!Processes::Auto.shares(ms(150)) && Processes::Auto.shares(ms(500)));
        assert!(Processes::Shared.shares(ms(1)) && !Processes::Fresh.shares(ms(60_000)));
    }

    #[test]
    fn odd_names_make_a_case_unshareable() {
        assert!(plain("s1") && plain("a.b-c_d"));
        assert!(!plain("") && !plain("../x") && !plain("a b") && !plain("\u{e9}"));
    }

    #[test]
    fn a_line_of_another_case_voids_a_shared_run() {
        use crate::wire::output::Output;
        let out = |n, t: &str| Output::parse(n, t.to_owned());
        let head = out(1, r#"{"jsonrpc":"2.0","id":"init","result":{}}"#);
        let own = out(2, r#"{"jsonrpc":"2.0","id":"k2-p1","result":{}}"#);
        let own_event = out(
            3,
            r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"k2-s1","status":"idle"}}"#,
        );
        let other = out(
            4,
            r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"k1-s1","status":"idle"}}"#,
        );
        let number = out(5, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        let lines = [head.clone(), own.clone(), own_event.clone()];
        assert!(only_own_lines(&lines, 1, "k2-"));
        assert!(!only_own_lines(
            &[head.clone(), own.clone(), other],
            1,
            "k2-"
        ));
        assert!(!only_own_lines(&[head, own, number], 1, "k2-"));
    }

    #[test]
    fn process_rules_and_odd_traces_never_share_and_plain_ones_do() {
        let all = super::super::cases::all().unwrap();
        let continued = continued(&all);
        assert!(continued.contains("resume-setup"), "{continued:?}");
        let how = |f: &str| {
            let c = all.iter().find(|c| c.file == f).unwrap();
            shareable(c, &continued)
        };
        // About the process, sent before initialize, an empty or odd session id, an end of
        // input: fresh.
        for f in [
            "frame.lone-surrogates-echoed.trace",
            "initialize.repeatable.trace",
            "error.unknown-method.trace",
            "frame.params-normalised.trace",
            "working-directory.validation.trace",
            "frame.unterminated-tail-dropped.trace",
            "session.ids-are-data.trace",
        ] {
            assert_eq!(how(f), None, "{f}");
        }
        // Ids that are what the check tests, numbers, bytes split over writes or not UTF-8:
        // as written.
        for f in [
            "frame.id-number-echo.trace",
            "response.id-type-preserved.trace",
            "frame.lone-surrogates-survived.trace",
            "frame.unknown-response-ignored.trace",
            "frame.split-writes.trace",
            "frame.invalid-utf8-replaced.trace",
        ] {
            assert_eq!(how(f), Some(Sharing::Literal), "{f}");
        }
        // Plain names, raw lines joined by a later frame, a later initialize notification:
        // renamed.
        for f in [
            "frame.cr-not-separator.trace",
            "frame.notifications-ignored.trace",
            "working-directory.get-set.trace",
        ] {
            assert_eq!(how(f), Some(Sharing::Renamed), "{f}");
        }
        // The model's cases (most of a slow runtime's boots) share; the process's never do.
        for c in &all {
            let id = c.check.id.as_str();
            if ["turn.", "receipt.", "prompt.", "wait."]
                .iter()
                .any(|p| id.starts_with(p))
            {
                assert_eq!(
                    shareable(c, &continued),
                    Some(Sharing::Renamed),
                    "{}",
                    c.file
                );
            }
            if ["initialize.", "lifecycle.", "resume.", "subagent."]
                .iter()
                .any(|p| id.starts_with(p))
            {
                assert_eq!(shareable(c, &continued), None, "{}", c.file);
            }
        }
        assert!(looks_renamed("k3-s1") && !looks_renamed("k-s1") && !looks_renamed("keys"));
    }

    #[test]
    fn the_cases_kept_as_written_can_all_share_one_process() {
        // A name two of them send would send the second to a fresh process of its own.
        let all = super::super::cases::all().unwrap();
        let continued = continued(&all);
        let mut used = Used::default();
        let mut literal = 0;
        for c in &all {
            if shareable(c, &continued) != Some(Sharing::Literal) {
                continue;
            }
            let mut body = c.trace(false).unwrap();
            body.steps.drain(..2);
            assert!(used.free(&body), "{} reuses a name of another", c.file);
            used.record(&body, &[], 0);
            literal += 1;
        }
        assert!(literal >= 7, "{literal}");
    }

    #[test]
    fn a_name_kept_as_written_shares_only_where_it_was_never_met() {
        use crate::wire::output::Output;
        let t = |text: &str| Trace::parse(text, "t").unwrap();
        let first = t(concat!(
            ">> {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"probe/a\"}\n",
            ">> {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\"}}\n",
        ));
        let mut used = Used::default();
        let out = |n, t: &str| Output::parse(n, t.to_owned());
        let lines = [
            out(1, r#"{"jsonrpc":"2.0","id":"init","result":{}}"#),
            out(2, r#"{"jsonrpc":"2.0","id":"late","result":{}}"#),
        ];
        used.record(&first, &lines, 1);
        // Its number id, its string id, its session, and an id only its lines named: met.
        let again = |text: &str| used.free(&t(text));
        assert!(!again(
            ">> {\"jsonrpc\":\"2.0\",\"id\":7.0,\"method\":\"probe/b\"}\n"
        ));
        assert!(!again(
            ">> {\"jsonrpc\":\"2.0\",\"id\":\"late\",\"method\":\"probe/b\"}\n"
        ));
        assert!(!again(">> {\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"session/wait\",\"params\":{\"sessionId\":\"s1\"}}\n"));
        // The string "7" is not the number 7; a null id names nothing.
        assert!(again(
            ">> {\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"probe/b\"}\n"
        ));
        assert!(again(
            ">> {\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"probe/b\"}\n"
        ));
        // A later case's lines: a met id or session voids its run; null ids and new names do not.
        let later = |l: &str| used.own_lines(&[lines[0].clone(), out(2, l)], 1);
        assert!(!later(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#));
        assert!(!later(
            r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s1","status":"idle"}}"#
        ));
        assert!(later(r#"{"jsonrpc":"2.0","id":null,"error":{}}"#));
        assert!(later(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#));
    }
}
