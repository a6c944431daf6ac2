//! The JUnit XML report (quick-junit writes it): one testsuite, one testcase per check, and a
//! `run` testcase with an `<error>` when the run itself failed (it stopped, or tested nothing), so
//! that GitLab, Jenkins and GitHub reporters show the cause, not only `skipped=61`.
//!
//! A testcase fails exactly when its check fails the run ([`Report::exit_code`]): MUST failures,
//! untestable MUST checks, stale baseline entries, and SHOULD failures under `should_fail`. A
//! SHOULD failure that does not fail the run is `<skipped type="SHOULD">` with its reason, so a
//! dashboard does not call a run unstable whose exit code says it passed.

use super::{Outcome, Report, Stopped};
use crate::check::Severity;
use crate::suite::verdict::{CheckResult, Verdict};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

impl Report {
    /// The JUnit XML report.
    pub fn junit(&self) -> String {
        let mut suite = TestSuite::new(format!("dsh-conformance ({})", self.edition));
        suite.set_time(self.duration);
        suite.add_properties(self.properties());
        if let Some(case) = self.run_error() {
            suite.add_test_case(case);
        }
        for r in &self.results {
            let mut case = TestCase::new(r.info.id.as_str(), self.status(r));
            let area = r.info.id.as_str().split('.').next().unwrap_or("check");
            case.set_classname(format!("dsh-conformance.{area}"));
            case.set_time(r.duration);
            suite.add_test_case(case);
        }
        let mut report = quick_junit::Report::new("dsh-conformance");
        report.set_time(self.duration);
        report.add_test_suite(suite);
        report
            .to_string()
            .map(|x| xml_1_0(&x))
            .unwrap_or_else(|e| format!("<!-- the JUnit report could not be written: {e} -->\n"))
    }

    fn properties(&self) -> Vec<Property> {
        let mut p = vec![Property::new("runtime", &self.runtime)];
        for (i, c) in self.root_causes().iter().enumerate() {
            let line = c.line().replace("\n      ", " ");
            p.push(Property::new(format!("root-cause.{}", i + 1), line));
        }
        if let Some(st) = &self.stopped {
            p.push(Property::new("stopped", stopped_message(st)));
            if !st.stderr_tail.trim().is_empty() {
                p.push(Property::new(
                    "runtime-stderr-tail",
                    st.stderr_tail.trim_end(),
                ));
            }
        }
        p
    }

    /// The `run` testcase: an `<error>` for a run that stopped or tested nothing.
    fn run_error(&self) -> Option<TestCase> {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        match self.outcome() {
            Outcome::Stopped(_) => {
                let st = self.stopped.as_ref()?;
                status
                    .set_type(st.reason())
                    .set_message(stopped_message(st));
                if !st.stderr_tail.trim().is_empty() {
                    status.set_description(format!("runtime stderr (tail):\n{}", st.stderr_tail));
                }
            }
            Outcome::NothingTested => {
                status.set_type("nothing-tested").set_message(
                    "nothing was tested: every selected check was skipped, blocked or untestable",
                );
            }
            Outcome::Findings | Outcome::Conforms => return None,
        }
        let mut case = TestCase::new("run", status);
        case.set_classname("dsh-conformance.run");
        case.set_time(self.duration);
        Some(case)
    }

    fn status(&self, r: &CheckResult) -> TestCaseStatus {
        let fails_run = r.info.severity == Severity::Must || self.should_fail;
        let failure = |ty: &str, message: String, description: Option<String>| {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type(ty).set_message(message);
            if let Some(d) = description {
                s.set_description(d);
            }
            s
        };
        let skipped = |ty: Option<&str>, message: String| {
            let mut s = TestCaseStatus::skipped();
            s.set_message(message);
            if let Some(ty) = ty {
                s.set_type(ty);
            }
            s
        };
        match &r.verdict {
            Verdict::Pass => TestCaseStatus::success(),
            Verdict::Fail(f) if fails_run => failure(
                &r.info.severity.to_string(),
                f.reason.clone(),
                Some(format!("{}\n{f}", r.info.rule)),
            ),
            Verdict::Fail(f) => {
                let mut s = skipped(
                    Some("SHOULD"),
                    format!(
                        "SHOULD not met (fails the run only with --should-fail): {}",
                        f.reason
                    ),
                );
                s.set_description(format!("{}\n{f}", r.info.rule));
                s
            }
            Verdict::NotTestable { reason } if r.info.severity == Severity::Must => {
                failure("not-testable", format!("not testable: {reason}"), None)
            }
            Verdict::StaleBaseline { baseline } => failure(
                "stale-baseline",
                format!("passes but is listed as known-failing: {baseline}"),
                None,
            ),
            Verdict::Skip { reason } => skipped(None, reason.clone()),
            Verdict::KnownFailing { failure, baseline } => skipped(
                Some("known-failing"),
                format!("known failing ({baseline}): {}", failure.reason),
            ),
            Verdict::NotTestable { .. } | Verdict::Blocked { .. } | Verdict::NotRun(_) => {
                skipped(None, r.verdict.summary())
            }
        }
    }
}

fn stopped_message(st: &Stopped) -> String {
    format!(
        "{} after {:.1} s. {}",
        st.halt,
        st.after.as_secs_f64(),
        st.cause
    )
}

/// Drops U+FFFE and U+FFFF, which XML 1.0 cannot carry either; quick-junit already drops the C0
/// controls (and ANSI escapes) a runtime's stderr brings.
fn xml_1_0(x: &str) -> String {
    x.replace(['\u{fffe}', '\u{ffff}'], "")
}

#[cfg(test)]
mod tests {
    use super::super::tests::report;
    use super::super::{Stopped, NOTHING_TESTED};
    use crate::runner::Halt;
    use crate::suite::verdict::Verdict;
    use std::time::Duration;

    /// The opening tags of the elements named `tag` (quick-junit writes one per line).
    fn tags<'x>(x: &'x str, tag: &str) -> Vec<&'x str> {
        let open = format!("<{tag} ");
        x.lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with(&open))
            .collect()
    }

    #[test]
    fn markup_and_control_characters_are_escaped() {
        let x = report().junit();
        assert!(x.contains("got &lt;x&gt; &amp; "), "{x}");
        assert!(!x.contains('\u{1}'));
        assert_eq!(x.matches("<testcase ").count(), 4, "{x}");
    }

    #[test]
    fn a_should_failure_is_a_failure_only_when_it_fails_the_run() {
        let mut rep = report();
        let x = rep.junit();
        assert!(!x.contains("<failure"), "{x}");
        assert!(
            tags(&x, "skipped")
                .iter()
                .any(|t| t.contains("type=\"SHOULD\"")),
            "{x}"
        );
        rep.should_fail = true;
        let x = rep.junit();
        let failures = tags(&x, "failure");
        assert!(
            failures.len() == 1 && failures[0].contains("type=\"SHOULD\""),
            "{x}"
        );
    }

    #[test]
    fn a_run_that_stopped_or_tested_nothing_is_an_error() {
        let mut rep = report();
        assert!(!rep.junit().contains("<error"));
        rep.stopped = Some(Stopped {
            halt: Halt::Unusable,
            cause: "it exited with status 127 before answering initialize".into(),
            stderr_tail: "sh: 1: my-rt: not found\n".into(),
            after: Duration::from_millis(20),
        });
        let x = rep.junit();
        let errors = tags(&x, "error");
        assert!(
            errors.len() == 1 && errors[0].contains("type=\"unusable\""),
            "{x}"
        );
        assert!(x.contains("status 127"), "{x}");
        assert!(x.contains("my-rt: not found"), "{x}");
        assert!(x.contains("errors=\"1\""), "{x}");
        let mut rep = report();
        for r in &mut rep.results {
            r.verdict = Verdict::Skip {
                reason: "not in edition".into(),
            };
        }
        assert_eq!(rep.exit_code(), NOTHING_TESTED);
        let x = rep.junit();
        assert!(
            tags(&x, "error")[0].contains("type=\"nothing-tested\""),
            "{x}"
        );
    }
}
