//! A `check --format json` report (`docs/report.schema.json`) read back typed: each check's verdict
//! by [`CheckId`], the root causes, the stop. Tests of the CLI judge verdicts through this, never
//! through the human table's words, padding or columns.

use dsh_conformance::check::CheckId;
use serde_json::Value;
use std::collections::BTreeSet;

/// A JSON report.
pub struct JsonReport(pub Value);

/// The check `id` names; panics on an id no check has.
fn id_of(v: &Value) -> CheckId {
    let s = v.as_str().unwrap_or_else(|| panic!("a check id: {v}"));
    CheckId::parse(s).unwrap_or_else(|| panic!("no check {s:?} is registered"))
}

impl JsonReport {
    /// Parses the report's text; panics, quoting it, when it is not JSON.
    pub fn parse(text: &str) -> JsonReport {
        JsonReport(serde_json::from_str(text).unwrap_or_else(|e| panic!("bad JSON ({e}): {text}")))
    }

    /// Every check in the report with its verdict word (`PASS`, `FAIL`, `XFAIL`, …).
    pub fn verdicts(&self) -> Vec<(CheckId, &str)> {
        self.0["checks"]
            .as_array()
            .unwrap_or_else(|| panic!("no checks: {self}"))
            .iter()
            .map(|c| (id_of(&c["id"]), c["verdict"].as_str().unwrap_or("")))
            .collect()
    }

    /// The checks whose verdict is `word`.
    pub fn with(&self, word: &str) -> BTreeSet<CheckId> {
        self.verdicts()
            .into_iter()
            .filter(|(_, w)| *w == word)
            .map(|(id, _)| id)
            .collect()
    }

    /// The check `id`'s entry; panics when it is not in the report.
    pub fn check(&self, id: CheckId) -> &Value {
        self.0["checks"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["id"] == id.as_str()))
            .unwrap_or_else(|| panic!("{id} is not in the report: {self}"))
    }

    /// The check `id`'s verdict word.
    pub fn verdict(&self, id: CheckId) -> &str {
        self.check(id)["verdict"].as_str().unwrap_or("")
    }

    /// The root causes' checks, in the report's order.
    pub fn root_causes(&self) -> Vec<CheckId> {
        self.0["root_causes"]
            .as_array()
            .unwrap_or_else(|| panic!("no root causes: {self}"))
            .iter()
            .map(|c| id_of(&c["check"]))
            .collect()
    }

    /// Why the run stopped early (`signal`, `budget`, `flooded`, `unusable`), if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.0["stopped"]["reason"].as_str()
    }
}

/// The checks of a `check --list --format json`, in its order, each with its entry.
pub fn listed(text: &str) -> Vec<(CheckId, Value)> {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("bad JSON ({e}): {text}"));
    v.as_array()
        .unwrap_or_else(|| panic!("a list: {text}"))
        .iter()
        .map(|c| (id_of(&c["id"]), c.clone()))
        .collect()
}

/// A report as a failed assertion shows it: every check not passing with its reason and failure
/// (the first 1,000 characters of each), the passing ones by name, and why the run stopped. CI
/// logs keep only so much of a test's output; the whole JSON would push the verdicts out of it.
impl std::fmt::Display for JsonReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(checks) = self.0["checks"].as_array() else {
            return write!(f, "{:#}", self.0);
        };
        let mut passing = Vec::new();
        for c in checks {
            let (id, verdict) = (c["id"].as_str().unwrap_or("?"), &c["verdict"]);
            if verdict == "PASS" {
                passing.push(id);
                continue;
            }
            let mut why = String::new();
            for part in [&c["reason"], &c["failure"], &c["baseline"]] {
                if !part.is_null() {
                    let text = part.as_str().map(str::to_owned).unwrap_or(part.to_string());
                    why.push_str(&format!(
                        " | {}",
                        text.chars().take(1000).collect::<String>()
                    ));
                }
            }
            writeln!(f, "{} {id}{why}", verdict.as_str().unwrap_or("?"))?;
        }
        writeln!(f, "PASS: {}", passing.join(" "))?;
        if !self.0["stopped"].is_null() {
            writeln!(f, "stopped: {}", self.0["stopped"])?;
        }
        write!(f, "summary: {}", self.0["summary"])
    }
}
