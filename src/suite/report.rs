//! Verdicts and the three report formats: a human table, JSON (schema in `docs/report.schema.json`)
//! and JUnit XML.

use super::registry::{CheckInfo, Severity};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::time::Duration;

/// What happened to one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The rule held.
    Pass,
    /// The rule was broken (or could not be tested because a prerequisite failed).
    Fail {
        /// One line: what broke.
        reason: String,
        /// Everything a person needs to act: expected vs got, frames, stderr tail.
        details: String,
    },
    /// The check does not apply to the edition under test.
    Skip {
        /// Why.
        reason: String,
    },
    /// Failed, and listed in the known-failing baseline with this reason.
    KnownFailing {
        /// The failure.
        reason: String,
        /// The baseline's justification.
        baseline: String,
    },
    /// Listed in the baseline but passed: the baseline is stale (fails the run).
    StaleBaseline {
        /// The baseline's justification.
        baseline: String,
    },
}

impl Verdict {
    /// The short word for tables.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail { .. } => "FAIL",
            Verdict::Skip { .. } => "SKIP",
            Verdict::KnownFailing { .. } => "XFAIL",
            Verdict::StaleBaseline { .. } => "STALE",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// The check.
    pub info: CheckInfo,
    /// Its verdict.
    pub verdict: Verdict,
    /// Wall time spent on it.
    pub duration: Duration,
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The runtime command line, or `built-in reference runtime`.
    pub runtime: String,
    /// The edition checked.
    pub edition: String,
    /// Per-check results, in registry order.
    pub results: Vec<CheckResult>,
    /// Wall time of the run.
    pub duration: Duration,
}

/// Counts over a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Passed.
    pub passed: usize,
    /// Failed (any severity) plus stale baseline entries.
    pub failed: usize,
    /// Not applicable to the edition.
    pub skipped: usize,
    /// Failed but listed in the baseline.
    pub known_failing: usize,
    /// Failures that fail the run: MUST failures and stale baseline entries.
    pub fatal: usize,
}

impl Report {
    /// Counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.results {
            match &r.verdict {
                Verdict::Pass => s.passed += 1,
                Verdict::Skip { .. } => s.skipped += 1,
                Verdict::KnownFailing { .. } => s.known_failing += 1,
                Verdict::Fail { .. } => {
                    s.failed += 1;
                    if r.info.severity == Severity::Must {
                        s.fatal += 1;
                    }
                }
                Verdict::StaleBaseline { .. } => {
                    s.failed += 1;
                    s.fatal += 1;
                }
            }
        }
        s
    }

    /// 0 when every MUST check passed and the baseline is not stale, else 1.
    pub fn exit_code(&self) -> i32 {
        if self.summary().fatal == 0 {
            0
        } else {
            1
        }
    }

    /// The closing line: `N passed, N failed` (`, N skipped`, `, N known failing`).
    pub fn summary_line(&self) -> String {
        let s = self.summary();
        let mut line = format!("{} passed, {} failed", s.passed, s.failed);
        if s.skipped > 0 {
            let _ = write!(line, ", {} skipped", s.skipped);
        }
        if s.known_failing > 0 {
            let _ = write!(line, ", {} known failing", s.known_failing);
        }
        line
    }

    /// The human table: one line per check, failure details after the table, then the summary.
    pub fn human(&self, verbose: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "dsh-conformance check: {} (edition {})",
            self.runtime, self.edition
        );
        let w = self
            .results
            .iter()
            .map(|r| r.info.id.len())
            .max()
            .unwrap_or(10);
        for r in &self.results {
            let why = match &r.verdict {
                Verdict::Pass => String::new(),
                Verdict::Fail { reason, .. } => reason.clone(),
                Verdict::Skip { reason } => reason.clone(),
                Verdict::KnownFailing { reason, baseline } => {
                    format!("{reason} (baseline: {baseline})")
                }
                Verdict::StaleBaseline { baseline } => {
                    format!("passes but is listed as known-failing ({baseline}): remove it from the baseline")
                }
            };
            let sev = if matches!(r.verdict, Verdict::Fail { .. })
                && r.info.severity == Severity::Should
            {
                " (SHOULD)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "{:<5} {:<w$}  {}{}",
                r.verdict.word(),
                r.info.id,
                why,
                sev
            );
        }
        for r in &self.results {
            if let Verdict::Fail { reason, details } = &r.verdict {
                if verbose || !details.is_empty() {
                    let _ = writeln!(
                        out,
                        "\n--- {} [{} {}] {}",
                        r.info.id, r.info.severity, r.info.section, r.info.rule
                    );
                    let _ = writeln!(out, "{reason}");
                    if !details.is_empty() {
                        let _ = writeln!(out, "{}", details.trim_end());
                    }
                }
            }
        }
        let _ = writeln!(out, "\n{}", self.summary_line());
        out
    }

    /// The JSON report (see `docs/report.schema.json`).
    pub fn json(&self) -> Value {
        let s = self.summary();
        json!({
            "schema": "dsh-conformance/report/v1",
            "runtime": self.runtime,
            "edition": self.edition,
            "duration_ms": self.duration.as_millis() as u64,
            "summary": {
                "passed": s.passed, "failed": s.failed, "skipped": s.skipped,
                "known_failing": s.known_failing, "fatal": s.fatal,
            },
            "checks": self.results.iter().map(|r| {
                let mut c = json!({
                    "id": r.info.id,
                    "section": r.info.section,
                    "severity": r.info.severity.to_string(),
                    "editions": r.info.editions.names().split(' ').collect::<Vec<_>>(),
                    "rule": r.info.rule,
                    "verdict": r.verdict.word(),
                    "duration_ms": r.duration.as_millis() as u64,
                });
                match &r.verdict {
                    Verdict::Pass => {}
                    Verdict::Fail { reason, details } => { c["reason"] = json!(reason); c["details"] = json!(details); }
                    Verdict::Skip { reason } => c["reason"] = json!(reason),
                    Verdict::KnownFailing { reason, baseline } => { c["reason"] = json!(reason); c["baseline"] = json!(baseline); }
                    Verdict::StaleBaseline { baseline } => c["baseline"] = json!(baseline),
                }
                c
            }).collect::<Vec<_>>(),
        })
    }

    /// JUnit XML: one testsuite, one testcase per check; SHOULD failures are failures too
    /// (type="SHOULD") so CI dashboards show them; skips and known failures are `<skipped>`.
    pub fn junit(&self) -> String {
        let s = self.summary();
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            x,
            "<testsuites name=\"dsh-conformance\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            self.results.len(),
            s.failed,
            s.skipped + s.known_failing,
            self.duration.as_secs_f64()
        );
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3}\">",
            esc(&format!("dsh-conformance ({})", self.edition)),
            self.results.len(),
            s.failed,
            s.skipped + s.known_failing,
            self.duration.as_secs_f64()
        );
        let _ = writeln!(
            x,
            "    <properties><property name=\"runtime\" value=\"{}\"/></properties>",
            esc(&self.runtime)
        );
        for r in &self.results {
            let class = r.info.id.split('.').next().unwrap_or("check");
            let _ = write!(
                x,
                "    <testcase classname=\"dsh-conformance.{}\" name=\"{}\" time=\"{:.3}\"",
                esc(class),
                esc(r.info.id),
                r.duration.as_secs_f64()
            );
            match &r.verdict {
                Verdict::Pass => x.push_str("/>\n"),
                Verdict::Fail { reason, details } => {
                    let _ = writeln!(
                        x,
                        ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                        r.info.severity,
                        esc(reason),
                        esc(&format!("{}\n{}", r.info.rule, details))
                    );
                }
                Verdict::StaleBaseline { baseline } => {
                    let _ = writeln!(
                        x,
                        ">\n      <failure type=\"stale-baseline\" message=\"{}\"/>\n    </testcase>",
                        esc(&format!("passes but is listed as known-failing: {baseline}"))
                    );
                }
                Verdict::Skip { reason } => {
                    let _ = writeln!(
                        x,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        esc(reason)
                    );
                }
                Verdict::KnownFailing { reason, baseline } => {
                    let _ = writeln!(
                        x,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        esc(&format!("known failing ({baseline}): {reason}"))
                    );
                }
            }
        }
        x.push_str("  </testsuite>\n</testsuites>\n");
        x
    }
}

/// XML-escapes text and attribute values; drops characters XML 1.0 cannot carry.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                let _ = write!(o, "\\u{{{:x}}}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::super::registry::find;
    use super::*;

    fn report() -> Report {
        let r = |id: &str, verdict: Verdict| CheckResult {
            info: *find(id).unwrap(),
            verdict,
            duration: Duration::from_millis(3),
        };
        Report {
            runtime: "./rt --profile sdk".into(),
            edition: "current".into(),
            duration: Duration::from_millis(40),
            results: vec![
                r("stdout.frames-only", Verdict::Pass),
                r(
                    "frame.cr-not-separator",
                    Verdict::Fail {
                        reason: "A\\rB answered".into(),
                        details: "got <x> & \u{1}".into(),
                    },
                ),
                r(
                    "turn.overlap-rejected",
                    Verdict::Skip {
                        reason: "not in edition current".into(),
                    },
                ),
                r(
                    "error.unknown-method",
                    Verdict::KnownFailing {
                        reason: "-32000".into(),
                        baseline: "ours".into(),
                    },
                ),
            ],
        }
    }

    #[test]
    fn the_summary_counts_and_only_must_failures_are_fatal() {
        let rep = report();
        assert_eq!(
            rep.summary_line(),
            "1 passed, 1 failed, 1 skipped, 1 known failing"
        );
        assert_eq!(rep.exit_code(), 0, "a SHOULD failure does not fail the run");
        let mut rep = report();
        rep.results[0].verdict = Verdict::Fail {
            reason: "x".into(),
            details: String::new(),
        };
        assert_eq!(rep.exit_code(), 1);
        let mut rep = report();
        rep.results[3].verdict = Verdict::StaleBaseline {
            baseline: "ours".into(),
        };
        assert_eq!(rep.exit_code(), 1, "a stale baseline fails the run");
    }

    #[test]
    fn the_human_table_has_a_line_per_check_and_ends_with_the_summary() {
        let h = report().human(false);
        assert!(h.lines().any(|l| l.starts_with("PASS  stdout.frames-only")));
        assert!(h
            .lines()
            .any(|l| l.starts_with("FAIL  frame.cr-not-separator") && l.ends_with("(SHOULD)")));
        assert_eq!(
            h.trim_end().lines().last(),
            Some("1 passed, 1 failed, 1 skipped, 1 known failing")
        );
    }

    #[test]
    fn junit_escapes_markup_and_control_characters() {
        let x = report().junit();
        assert!(x.contains("got &lt;x&gt; &amp; \\u{1}"));
        assert!(x.contains("<failure type=\"SHOULD\""));
        assert_eq!(x.matches("<testcase ").count(), 4);
    }
}
