//! The allowlist of known, justified differences ([`super::diff`]'s findings it suppresses).
//!
//! Format (one entry a line, `#` starts a comment):
//! ```text
//! <class-pattern> [| <detail substring>]  # <reason, required>
//! ```
//! `*` in the pattern matches any text (`diff:error-message:*`); with a detail the entry only
//! suppresses findings whose detail contains it, or, written `/<regex>/`, matches that regular
//! expression (`regex` crate syntax; it cannot hold `#`, which starts the reason).

use super::Finding;

/// What an allowlist entry asks of a finding's detail.
#[derive(Debug, Clone)]
pub enum DetailMatch {
    /// The detail contains this text.
    Contains(String),
    /// The detail matches this regular expression (written `/<regex>/`).
    Regex(regex::Regex),
}

impl DetailMatch {
    /// Whether `detail` satisfies it.
    pub fn matches(&self, detail: &str) -> bool {
        match self {
            DetailMatch::Contains(s) => detail.contains(s.as_str()),
            DetailMatch::Regex(r) => r.is_match(detail),
        }
    }
}

/// One allowlist entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Class pattern (`*` wildcards).
    pub pattern: String,
    /// What the detail must hold, if anything.
    pub detail: Option<DetailMatch>,
    /// Why the difference is justified.
    pub reason: String,
}

/// Known, justified differences.
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    /// The entries, in file order.
    pub entries: Vec<Entry>,
}

impl Allowlist {
    /// Parses the file format; every entry needs a reason.
    pub fn parse(text: &str, file: &str) -> Result<Allowlist, String> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((body, reason)) = line.split_once('#') else {
                return Err(format!("{file}:{}: entry without `# <reason>`", n + 1));
            };
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(format!("{file}:{}: empty reason", n + 1));
            }
            let (pattern, detail) = match body.split_once('|') {
                Some((p, d)) => (p.trim(), Some(d.trim().to_owned())),
                None => (body.trim(), None),
            };
            if pattern.is_empty() || pattern.contains(char::is_whitespace) {
                return Err(format!(
                    "{file}:{}: expected `<class-pattern> [| <detail>]  # <reason>`",
                    n + 1
                ));
            }
            let detail = match detail.filter(|d| !d.is_empty()) {
                Some(d) if d.len() >= 2 && d.starts_with('/') && d.ends_with('/') => {
                    let re = regex::Regex::new(&d[1..d.len() - 1])
                        .map_err(|e| format!("{file}:{}: bad detail regex: {e}", n + 1))?;
                    Some(DetailMatch::Regex(re))
                }
                d => d.map(DetailMatch::Contains),
            };
            entries.push(Entry {
                pattern: pattern.to_owned(),
                detail,
                reason: reason.to_owned(),
            });
        }
        Ok(Allowlist { entries })
    }

    /// The entry that suppresses `f`, if any.
    pub fn allows(&self, f: &Finding) -> Option<&Entry> {
        self.entries.iter().find(|e| {
            crate::suite::select::glob(&e.pattern, &f.class.to_string())
                && e.detail.as_ref().is_none_or(|d| d.matches(&f.detail))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blackbox::class::{DiffKind, FindingClass};

    #[test]
    fn allowlist_entries_need_a_reason_and_match_by_glob_and_detail() {
        assert!(Allowlist::parse("diff:exit\n", "f").is_err());
        assert!(Allowlist::parse("diff:exit #   \n", "f").is_err());
        let a = Allowlist::parse(
            "# header\ndiff:error-message:*  # wording differs\ndiff:events:* | \"s1\"  # s1 only\n",
            "f",
        )
        .unwrap();
        let f = |k: DiffKind, w: &str, d: &str| Finding {
            class: FindingClass::Diff(k, w.into()),
            detail: d.into(),
        };
        let init = "initialize";
        assert!(a.allows(&f(DiffKind::ErrorMessage, init, "x")).is_some());
        assert!(a.allows(&f(DiffKind::ErrorCode, init, "x")).is_none());
        assert!(a
            .allows(&f(DiffKind::Events, "a->b", "session \"s1\""))
            .is_some());
        assert!(a
            .allows(&f(DiffKind::Events, "a->b", "session \"s2\""))
            .is_none());
        // A detail written /…/ is a regular expression; a bad one is an error with its line.
        let r = Allowlist::parse("diff:exit | /code [0-9]+$/  # any code\n", "f").unwrap();
        assert!(r.allows(&f(DiffKind::Exit, "", "exit code 17")).is_some());
        assert!(r
            .allows(&f(DiffKind::Exit, "", "exit code 17 or so"))
            .is_none());
        let e = Allowlist::parse("\ndiff:exit | /(/  # broken\n", "f").unwrap_err();
        assert!(e.starts_with("f:2: bad detail regex"), "{e}");
    }
}
