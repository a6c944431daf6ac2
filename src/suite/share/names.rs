//! The names of a shared case: finding them, renaming them apart, and telling a case's lines
//! from an earlier case's (issue 38; [`super`] decides which cases share and how).

use super::sent_json;
use crate::trace::{Send, StepKind, Trace};
use crate::wire::output::{Frame, Output};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};

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
pub(super) fn plain(name: &str) -> bool {
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
/// cases, or named by its lines. A case sharing as written ([`super::Sharing::Literal`]) runs only
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

/// The names `t`'s sends give: ids as JSON text, as a line's [`Frame::Response`] names them (a
/// frame's string or number id, as the trace holds it; a raw send's string ids too), sessions as
/// strings.
fn sent_names(t: &Trace) -> Names {
    use crate::wire::json::to_string;
    let (strings, sessions) = names(t);
    let mut ids: BTreeSet<String> = (strings.into_iter())
        .map(|s| to_string(&Value::String(s)))
        .collect();
    for s in &t.steps {
        if let StepKind::Send(Send::Frame { id: Some(id), .. }) = &s.kind {
            ids.insert(id.clone());
        }
    }
    (ids, sessions)
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
