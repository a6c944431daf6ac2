//! The JUnit XML report: one testsuite, one testcase per check.

use super::Report;
use crate::check::Severity;
use crate::suite::verdict::{CheckResult, Verdict};
use std::fmt::Write as _;

impl Report {
    /// JUnit XML: one testsuite, one testcase per check; SHOULD failures are failures too
    /// (type="SHOULD") so CI dashboards show them; skips and known failures are `<skipped>`.
    pub fn junit(&self) -> String {
        let s = self.summary();
        let failures = self.results.iter().filter(|r| is_failure(r)).count();
        let skipped = self.results.len() - s.passed - failures;
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            x,
            "<testsuites name=\"dsh-conformance\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            self.results.len(),
            failures,
            skipped,
            self.duration.as_secs_f64()
        );
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3}\">",
            esc(&format!("dsh-conformance ({})", self.edition)),
            self.results.len(),
            failures,
            skipped,
            self.duration.as_secs_f64()
        );
        self.junit_properties(&mut x);
        for r in &self.results {
            testcase(&mut x, r);
        }
        x.push_str("  </testsuite>\n</testsuites>\n");
        x
    }

    /// The testsuite's properties: the runtime, the root causes, why the run stopped.
    fn junit_properties(&self, x: &mut String) {
        let _ = write!(
            x,
            "    <properties><property name=\"runtime\" value=\"{}\"/>",
            esc(&self.runtime)
        );
        for (i, c) in self.root_causes().iter().enumerate() {
            let _ = write!(
                x,
                "<property name=\"root-cause.{}\" value=\"{}\"/>",
                i + 1,
                esc(&c.line().replace("\n      ", " "))
            );
        }
        if let Some(st) = &self.stopped {
            let _ = write!(
                x,
                "<property name=\"stopped\" value=\"{}\"/>",
                esc(&format!(
                    "{} after {:.1} s. {}",
                    st.halt,
                    st.after.as_secs_f64(),
                    st.cause
                ))
            );
            if !st.stderr_tail.trim().is_empty() {
                let _ = write!(
                    x,
                    "<property name=\"runtime-stderr-tail\" value=\"{}\"/>",
                    esc(st.stderr_tail.trim_end())
                );
            }
        }
        x.push_str("</properties>\n");
    }
}

/// Whether a result is a JUnit `<failure>`: a failure (any severity), a stale baseline entry,
/// an untestable MUST check.
fn is_failure(r: &CheckResult) -> bool {
    matches!(r.verdict, Verdict::Fail(_) | Verdict::StaleBaseline { .. })
        || (matches!(r.verdict, Verdict::NotTestable { .. }) && r.info.severity == Severity::Must)
}

/// One check's `<testcase>`: empty when it passed, else holding its `<failure>` or `<skipped>`.
fn testcase(x: &mut String, r: &CheckResult) {
    let class = r.info.id.as_str().split('.').next().unwrap_or("check");
    let _ = write!(
        x,
        "    <testcase classname=\"dsh-conformance.{}\" name=\"{}\" time=\"{:.3}\"",
        esc(class),
        esc(r.info.id.as_str()),
        r.duration.as_secs_f64()
    );
    let body = match &r.verdict {
        Verdict::Pass => {
            x.push_str("/>\n");
            return;
        }
        Verdict::Fail(f) => format!(
            "<failure type=\"{}\" message=\"{}\">{}</failure>",
            r.info.severity,
            esc(&f.reason),
            esc(&format!("{}\n{f}", r.info.rule))
        ),
        Verdict::NotTestable { reason } if r.info.severity == Severity::Must => format!(
            "<failure type=\"not-testable\" message=\"{}\"/>",
            esc(&format!("not testable: {reason}"))
        ),
        Verdict::NotTestable { .. } | Verdict::Blocked { .. } | Verdict::NotRun(_) => {
            skipped(&r.verdict.summary())
        }
        Verdict::StaleBaseline { baseline } => format!(
            "<failure type=\"stale-baseline\" message=\"{}\"/>",
            esc(&format!(
                "passes but is listed as known-failing: {baseline}"
            ))
        ),
        Verdict::Skip { reason } => skipped(reason),
        Verdict::KnownFailing { failure, baseline } => {
            skipped(&format!("known failing ({baseline}): {}", failure.reason))
        }
    };
    let _ = writeln!(x, ">\n      {body}\n    </testcase>");
}

/// A `<skipped>` element with this message.
fn skipped(message: &str) -> String {
    format!("<skipped message=\"{}\"/>", esc(message))
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
