//! Which checks a run selects: `--filter PATTERN` (repeatable: any of them) minus `--skip PATTERN`
//! (repeatable). A pattern is a substring of the check id, or a glob when it has `*`.
//!
//! The glob is hand-written on purpose: `*` is its only metacharacter, so the patterns users
//! already keep (here and in fuzz allowlists, which use [`glob`] too) mean what they meant; a glob crate would
//! give `?`, `[…]` and `{…}` meanings they never had.

use crate::check::CheckId;

/// `--filter` and `--skip` patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Any of these selects a check (none: every check).
    pub filters: Vec<String>,
    /// Any of these leaves a check out, even when a filter selects it.
    pub skips: Vec<String>,
}

impl Selection {
    /// Only checks matching `pattern`.
    pub fn only(pattern: &str) -> Selection {
        Selection {
            filters: vec![pattern.to_owned()],
            skips: Vec::new(),
        }
    }

    /// Whether the check runs.
    pub fn selects(&self, id: CheckId) -> bool {
        let id = id.as_str();
        (self.filters.is_empty() || self.filters.iter().any(|f| matches(id, f)))
            && !self.skips.iter().any(|s| matches(id, s))
    }
}

impl std::fmt::Display for Selection {
    /// As flags: `--filter A --skip B` (`no flags` when it selects everything).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let flags: Vec<String> = (self.filters.iter().map(|p| format!("--filter {p:?}")))
            .chain(self.skips.iter().map(|p| format!("--skip {p:?}")))
            .collect();
        match flags.is_empty() {
            true => f.write_str("no flags"),
            false => f.write_str(&flags.join(" ")),
        }
    }
}

/// A check-id pattern: a glob when it has `*`, else a substring.
pub fn matches(id: &str, pattern: &str) -> bool {
    if pattern.contains('*') {
        glob(pattern, id)
    } else {
        id.contains(pattern)
    }
}

/// Whether `s` matches `pat` whole, `*` standing for any run of characters (the kit's only
/// glob: check selection and fuzz allowlists).
pub fn glob(pat: &str, s: &str) -> bool {
    let parts: Vec<&str> = pat.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return s == pat;
    }
    let Some(mut rest) = s.strip_prefix(first) else {
        return false;
    };
    for p in &parts[1..parts.len() - 1] {
        let Some(at) = rest.find(p) else { return false };
        rest = &rest[at + p.len()..];
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_substrings_or_globs() {
        assert!(matches("frame.batch-ignored", "batch"));
        assert!(matches("frame.batch-ignored", "frame.*"));
        assert!(matches("frame.batch-ignored", "*.batch-*"));
        assert!(!matches("frame.batch-ignored", "turn.*"));
        assert!(matches("frame.batch-ignored", "*"));
        assert!(matches("frame.batch-ignored", "frame*"));
        assert!(!matches("frame.batch-ignored", "frame.*x"));
        assert!(glob("a*a", "aa") && !glob("a*a", "a"));
    }

    #[test]
    fn filters_add_up_and_skips_win() {
        let s = Selection {
            filters: vec!["frame.*".into(), "turn.final-text".into()],
            skips: vec!["batch".into()],
        };
        assert!(s.selects(CheckId::parse("turn.final-text").unwrap()));
        assert!(s.selects(CheckId::parse("frame.cr-not-separator").unwrap()));
        assert!(!s.selects(CheckId::parse("frame.batch-ignored").unwrap()));
        assert!(!s.selects(CheckId::parse("turn.no-replay").unwrap()));
        assert!(Selection::default().selects(CheckId::parse("turn.no-replay").unwrap()));
        assert_eq!(
            s.to_string(),
            r#"--filter "frame.*" --filter "turn.final-text" --skip "batch""#
        );
    }
}
