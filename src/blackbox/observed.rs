//! What a fuzzed run showed, normalised for comparison with another runtime: answers by id,
//! notifications by session, the ending; uuids, case directories and method names replaced.

use super::sequence::BARRIER_METHOD;
use crate::runner::CaseDirs;
use crate::trace::ExitInfo;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How a request was answered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// With a result (normalised JSON text: uuids as `{{uuid}}`, case directories as
    /// `{{cwd}}`/`{{home}}`, `serverInfo.version` as `{{string}}`: versions legitimately differ).
    Result(String),
    /// With an error (message normalised: case directories, uuids and the method name replaced).
    Error {
        /// `error.code`.
        code: i64,
        /// Normalised `error.message`.
        message: String,
    },
}

/// What a run showed, normalised for comparison with another runtime.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Answers by id echo (duplicate ids share an entry: which answer is whose is not observable).
    pub responses: BTreeMap<String, Vec<Outcome>>,
    /// The methods of the requests sent with each id echo (`+`-joined protocol methods, or `<other>`).
    pub methods: BTreeMap<String, String>,
    /// Id echoes of requests never answered.
    pub unanswered: Vec<String>,
    /// Per session (uuids numbered by first appearance): event types and status changes, with
    /// consecutive repeats collapsed (streaming chunk counts are not behaviour) but for splices;
    /// each type with the role the comparison needs after `#` ([`super::events::label`]).
    pub events: BTreeMap<String, Vec<String>>,
    /// Per session (as [`Observed::events`] names them): each tool result, in order, as the
    /// tool's name and the result's text (normalised; `[error] ` first when `isError`).
    pub tool_results: BTreeMap<String, Vec<(String, String)>>,
    /// How the process ended.
    pub exit: Option<ExitInfo>,
    /// The run ended its process (`shutdown` or EOF, then the exit); a run on a shared process
    /// that the next sequence continues has no ending to compare.
    pub ended: bool,
    /// Lines the runtime read.
    pub frames_in: usize,
    /// Lines it wrote.
    pub frames_out: usize,
    /// What the run's findings already report, left out of the comparison.
    pub flagged: Flagged,
    /// The `sessionId` strings the requests of each id echo named (see
    /// [`super::diff::compare_explained`]).
    pub request_sessions: BTreeMap<String, BTreeSet<String>>,
    /// Each subagent's parent (`subagent.started`), both as [`Observed::events`] names them.
    pub parents: BTreeMap<String, String>,
}

/// Parts of a run whose frames broke a rule: comparing them with the reference would only
/// repeat the finding.
#[derive(Debug, Clone, Default)]
pub struct Flagged {
    /// Id echoes whose responses broke a rule (or that stayed unanswered).
    pub ids: BTreeSet<String>,
    /// Session labels (as in [`Observed::events`]) whose notifications broke a rule.
    pub sessions: BTreeSet<String>,
    /// The ending broke a rule (no answer to shutdown, no exit, exit status other than 0).
    pub exit: bool,
}

/// The method as comparisons name it: protocol methods by name, anything else as `<other>`.
pub fn method_label(m: &str) -> &str {
    const KNOWN: [&str; 8] = [
        "initialize",
        "session/prompt",
        "session/resume",
        "session/wait",
        "session/working-directory/get",
        "session/working-directory/set",
        "shutdown",
        BARRIER_METHOD,
    ];
    if KNOWN.contains(&m) {
        m
    } else {
        "<other>"
    }
}

/// Replaces uuids and case directories in every string of `v`.
pub(super) fn normalise_value(v: &mut Value, dirs: &CaseDirs) {
    match v {
        Value::String(s) if crate::trace::pattern::is_uuid(s) => *s = "{{uuid}}".into(),
        Value::String(s) => *s = normalise(s, dirs, ""),
        Value::Array(a) => a.iter_mut().for_each(|x| normalise_value(x, dirs)),
        Value::Object(o) => o.values_mut().for_each(|x| normalise_value(x, dirs)),
        _ => {}
    }
}

/// An error message with the case's directories, uuids and the request's method name replaced.
pub(super) fn normalise(msg: &str, dirs: &CaseDirs, method: &str) -> String {
    let mut pairs = vec![(dirs.cwd.as_path(), "{{cwd}}"), (&dirs.home, "{{home}}")];
    // The case root (the parent of cwd, reached by `..`): canonical, and as created.
    pairs.extend(dirs.cwd.parent().map(|root| (root, "{{cwd}}/..")));
    pairs.push((dirs.root(), "{{cwd}}/.."));
    let mut s = msg.to_owned();
    for (dir, name) in &pairs {
        s = s.replace(&*dir.to_string_lossy(), name);
    }
    // The same relative to `/` (a tool's result for a search from the root names them so).
    for (dir, name) in &pairs {
        if let Ok(rel) = dir.strip_prefix("/") {
            s = s.replace(&*rel.to_string_lossy(), name);
        }
    }
    const UNKNOWN: &str = "unknown DeepSeek Harness SDK runtime method: ";
    if s.starts_with(UNKNOWN) {
        // Which of several requests sharing an id an error belongs to is not observable.
        s = format!("{UNKNOWN}{{{{method}}}}");
    } else if !method.is_empty() {
        if let Some(rest) = s.strip_suffix(method) {
            s = format!("{rest}{{{{method}}}}");
        }
    }
    // The number of the session opened for a prompt without `sessionId`: prompts arriving while
    // one is opening join it, so how many opens there were is a race of arrival times.
    const ANONYMOUS: &str = "agent id \"undefined\" does not match session id \"session-";
    if let Some(rest) = s.strip_prefix(ANONYMOUS) {
        if rest
            .strip_suffix('"')
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            s = format!("{ANONYMOUS}{{{{n}}}}\"");
        }
    }
    // uuids: 36 chars, hyphens at 8/13/18/23.
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if i + 36 <= s.len()
            && s.is_char_boundary(i + 36)
            && crate::trace::pattern::is_uuid(&s[i..i + 36])
        {
            out.push_str("{{uuid}}");
            i += 36;
        } else {
            let c = s[i..].chars().next().unwrap_or('\0');
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_of_an_anonymous_session_is_not_compared() {
        let dirs = CaseDirs::new_in(&std::env::temp_dir(), false).unwrap();
        let n = |m: &str| normalise(m, &dirs, "session/prompt");
        let m = |k: &str| format!("agent id \"undefined\" does not match session id \"{k}\"");
        assert_eq!(n(&m("session-3")), n(&m("session-1")));
        assert_ne!(n(&m("session-x")), n(&m("session-1")));
        assert_eq!(n("session \"s\" not found"), "session \"s\" not found");
    }

    /// Seen against the release (seed 204, case 615): a glob from `/` lists the case's files
    /// relative to it.
    #[test]
    fn the_case_directories_are_named_absolute_or_relative_to_the_root() {
        let (a, b) = (CaseDirs::new(false).unwrap(), CaseDirs::new(false).unwrap());
        let listing = |d: &CaseDirs| {
            let rel = d.cwd.strip_prefix("/").unwrap().join("w.txt");
            let abs = d.home.join("x");
            format!("{}\n{}", rel.display(), abs.display())
        };
        let (na, nb) = (
            normalise(&listing(&a), &a, ""),
            normalise(&listing(&b), &b, ""),
        );
        assert_eq!(na, nb);
        assert_eq!(na, "{{cwd}}/w.txt\n{{home}}/x");
    }
}
