//! The `--known-failing FILE` baseline: checks a runtime is known to fail, each with a reason.
//!
//! Format, one entry a line: `<check-id>  # <reason>`. Blank lines and lines starting with `#` are
//! comments. An entry without a reason, an unknown check id or a duplicate is an error: a baseline
//! is a list of justified exceptions, not a mute button.

use std::collections::BTreeMap;

/// Parsed baseline: check id → reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline(pub BTreeMap<String, String>);

impl Baseline {
    /// Parses baseline text; `name` is used in error messages.
    pub fn parse(text: &str, name: &str) -> Result<Baseline, String> {
        let mut map = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |col: usize, msg: String| format!("{name}:{}:{}: {msg}", i + 1, col + 1);
            let (id, reason) = match line.split_once('#') {
                Some((id, reason)) => (id.trim(), reason.trim()),
                None => (line, ""),
            };
            if id.contains(char::is_whitespace) {
                return Err(at(
                    0,
                    format!("expected one check id before '#', found {id:?}"),
                ));
            }
            if crate::check::find(id).is_none() {
                return Err(at(
                    0,
                    format!("unknown check id {id:?} (see `dsh-conformance check --list`)"),
                ));
            }
            if reason.is_empty() {
                return Err(at(
                    raw.len(),
                    format!("{id}: every entry needs a reason after '#'"),
                ));
            }
            if map.insert(id.to_owned(), reason.to_owned()).is_some() {
                return Err(at(0, format!("{id} is listed twice")));
            }
        }
        Ok(Baseline(map))
    }

    /// The reason a check is listed, if it is.
    pub fn reason(&self, id: &str) -> Option<&str> {
        self.0.get(id).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_need_a_known_id_and_a_reason() {
        let b = Baseline::parse(
            "# header\n\nerror.unknown-method  # answers -32601 by design\n",
            "b.txt",
        )
        .unwrap();
        assert_eq!(
            b.reason("error.unknown-method"),
            Some("answers -32601 by design")
        );
        assert_eq!(
            Baseline::parse("error.unknown-method\n", "b.txt").unwrap_err(),
            "b.txt:1:21: error.unknown-method: every entry needs a reason after '#'"
        );
        assert!(Baseline::parse("no.such-check # x\n", "b.txt")
            .unwrap_err()
            .contains("unknown check id"));
        assert!(Baseline::parse("a b # x\n", "b.txt").is_err());
        assert!(Baseline::parse(
            "error.unknown-method # x\nerror.unknown-method # y\n",
            "b.txt"
        )
        .unwrap_err()
        .contains("listed twice"));
    }
}
