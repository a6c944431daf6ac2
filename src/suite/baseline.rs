//! The `--known-failing FILE` baseline: checks a runtime is known to fail, each with a reason.
//!
//! Format, one entry a line: `<check-id>  # <reason>`. Blank lines and lines starting with `#` are
//! comments. An entry without a reason, an unknown check id, a check of the other kind (a client
//! check in a runtime's baseline, or the other way round) or a duplicate is an error: a baseline
//! is a list of justified exceptions, not a mute button.

use crate::check::Subject;
use std::collections::BTreeMap;

/// The reason a written baseline's entries start with until their author gives theirs.
pub const STUB: &str = "FIXME give a reason;";

/// Parsed baseline: check id → reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline(pub BTreeMap<String, String>);

impl Baseline {
    /// Parses the baseline text of a `subject` (what `check` or `client` judges); `name` is used
    /// in error messages.
    pub fn parse(text: &str, name: &str, subject: Subject) -> Result<Baseline, String> {
        // (this subject's command, its checks' kind; the other's command, its kind)
        let (command, kind, other, other_kind) = match subject {
            Subject::Runtime => ("check", "runtime", "client", "client"),
            Subject::Client => ("client", "client", "check", "runtime"),
        };
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
            let Some(info) = crate::check::find(id) else {
                return Err(at(
                    0,
                    format!("unknown check id {id:?} (see `dsh-conformance {command} --list`)"),
                ));
            };
            if info.subject() != subject {
                return Err(at(
                    0,
                    format!("{id} is a {other_kind} check: `{command} --known-failing` takes {kind} checks (`{command} --list`); it belongs in a baseline for `{other} --known-failing`"),
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

    /// A first baseline from a run (`check --write-known-failing FILE`): every check that failed,
    /// each stubbed with [`STUB`] and its failure for the author to replace by a reason; entries
    /// the run's baseline already justified keep their reason.
    pub fn stub(report: &super::Report) -> String {
        let mut out = format!(
            "# dsh-conformance known failures of {} (edition {}).\n# Replace each `{STUB}` with why \
             the failure is accepted; `check --known-failing` warns while one is left.\n",
            report.runtime, report.edition
        );
        for r in &report.results {
            let line = match &r.verdict {
                super::Verdict::Fail(f) => {
                    let why: String = f.reason.chars().take(160).collect();
                    format!(
                        "{}  # {STUB} it failed: {}",
                        r.info.id,
                        why.replace('\n', " ")
                    )
                }
                super::Verdict::KnownFailing { baseline, .. } => {
                    format!("{}  # {baseline}", r.info.id)
                }
                _ => continue,
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// The entries whose reason is still the stub of [`Baseline::stub`].
    pub fn unjustified(&self) -> Vec<&str> {
        let stubbed = self.0.iter().filter(|(_, r)| r.starts_with(STUB));
        stubbed.map(|(id, _)| id.as_str()).collect()
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
    fn a_stubbed_baseline_parses_and_its_stubs_are_reported() {
        let rep = crate::suite::report::tests::report();
        let text = Baseline::stub(&rep);
        let b = Baseline::parse(&text, "b.txt", Subject::Runtime).unwrap();
        // The SHOULD failure is stubbed; the known failure keeps its reason; passes are left out.
        assert_eq!(b.unjustified(), ["frame.cr-not-separator"]);
        assert_eq!(b.reason("error.unknown-method"), Some("ours"));
        assert_eq!(b.0.len(), 2, "{text}");
    }

    #[test]
    fn entries_need_a_known_id_and_a_reason() {
        let b = Baseline::parse(
            "# header\n\nerror.unknown-method  # answers -32601 by design\n",
            "b.txt",
            Subject::Runtime,
        )
        .unwrap();
        assert_eq!(
            b.reason("error.unknown-method"),
            Some("answers -32601 by design")
        );
        assert_eq!(
            Baseline::parse("error.unknown-method\n", "b.txt", Subject::Runtime).unwrap_err(),
            "b.txt:1:21: error.unknown-method: every entry needs a reason after '#'"
        );
        assert!(
            Baseline::parse("no.such-check # x\n", "b.txt", Subject::Runtime)
                .unwrap_err()
                .contains("unknown check id")
        );
        assert!(Baseline::parse("a b # x\n", "b.txt", Subject::Runtime).is_err());
        assert!(Baseline::parse(
            "error.unknown-method # x\nerror.unknown-method # y\n",
            "b.txt",
            Subject::Runtime
        )
        .unwrap_err()
        .contains("listed twice"));
    }

    #[test]
    fn a_check_of_the_other_kind_is_refused_naming_where_it_belongs() {
        let client = "client.root-idle # ends at any idle\n";
        let e = Baseline::parse(client, "b.txt", Subject::Runtime).unwrap_err();
        assert!(
            e.contains("client.root-idle is a client check")
                && e.contains("`client --known-failing`"),
            "{e}"
        );
        assert!(Baseline::parse(client, "b.txt", Subject::Client).is_ok());
        let runtime = "error.unknown-method # x\n";
        let e = Baseline::parse(runtime, "b.txt", Subject::Client).unwrap_err();
        assert!(
            e.contains("error.unknown-method is a runtime check")
                && e.contains("`check --known-failing`"),
            "{e}"
        );
    }
}
