//! The JSON report (schema in `docs/report.schema.json`): the run, each check's verdict with its
//! failure's structured fields, and the requirements the run judged.

use super::Report;
use crate::check::CheckId;
use crate::edition::Edition;
use crate::runner::Halt;
use crate::suite::verdict::{Failure, Verdict};
use serde_json::{json, Value};

impl Report {
    /// The JSON report (see `docs/report.schema.json`).
    pub fn json(&self) -> Value {
        let s = self.summary();
        json!({
            "schema": "dsh-conformance/report/v2",
            "runtime": self.runtime,
            "edition": self.edition.name(),
            "duration_ms": self.duration.as_millis() as u64,
            "summary": {
                "passed": s.passed, "failed": s.failed, "blocked": s.blocked,
                "not_testable": s.not_testable, "skipped": s.skipped,
                "known_failing": s.known_failing, "not_run": s.not_run, "fatal": s.fatal,
            },
            "outcome": self.outcome().name(),
            "should_fail": self.should_fail,
            "hint": self.hint,
            "start": self.start.map(|s| json!({
                "boot_ms": s.boot.wall.as_millis() as u64,
                "boot_cpu_ms": s.boot.cpu.map(|c| c.as_millis() as u64),
                "spares_per_job": s.spares_per_job,
                "shares_processes": s.shares_processes,
                "processes": s.plan.processes,
                "boots_ms": s.plan.boots.as_millis() as u64,
                "budget_ms": s.plan.budget.map(|b| b.as_millis() as u64),
            })),
            "stopped": self.stopped.as_ref().map(|st| json!({
                "reason": st.reason(),
                "signal": match st.halt { Halt::Signal(n) => Some(n), _ => None },
                "budget_s": match st.halt { Halt::Budget(d) => Some(d.as_secs()), _ => None },
                "message": format!("{}. {}", st.halt, st.cause),
                "stderr_tail": st.stderr_tail,
                "after_ms": st.after.as_millis() as u64,
            })),
            "root_causes": self.root_causes().iter().map(|c| json!({
                "check": c.check.as_str(),
                "severity": c.severity.to_string(),
                "section": c.section,
                "verdict": c.verdict,
                "reason": c.reason,
                "blocks": ids(&c.blocks),
            })).collect::<Vec<_>>(),
            "requirements": self.requirements_json(),
            "checks": self.results.iter().map(|r| {
                let mut c = json!({
                    "id": r.info.id.as_str(),
                    "section": r.info.section,
                    "severity": r.info.severity.to_string(),
                    "editions": r.info.editions.iter().map(Edition::name).collect::<Vec<_>>(),
                    "rule": r.info.rule,
                    "requires": ids(r.info.requires),
                    "verdict": r.verdict.word(),
                    "duration_ms": r.duration.as_millis() as u64,
                });
                if !r.ran_in.is_empty() {
                    c["ran_in"] = json!(r.ran_in.iter().map(ToString::to_string).collect::<Vec<_>>());
                }
                match &r.verdict {
                    Verdict::Pass => {}
                    Verdict::Fail(f) => { c["reason"] = json!(f.reason); c["failure"] = failure_json(f); }
                    Verdict::Blocked { by } => { c["reason"] = json!(r.verdict.summary()); c["blocked_by"] = ids(by); }
                    Verdict::NotTestable { reason } | Verdict::Skip { reason } => c["reason"] = json!(reason),
                    Verdict::KnownFailing { failure, baseline } => { c["reason"] = json!(failure.reason); c["failure"] = failure_json(failure); c["baseline"] = json!(baseline); }
                    Verdict::StaleBaseline { baseline } => c["baseline"] = json!(baseline),
                    Verdict::NotRun(_) => c["reason"] = json!(r.verdict.summary()),
                }
                c
            }).collect::<Vec<_>>(),
        })
    }

    /// The requirements of the run's edition (docs/REQUIREMENTS.md) and how its verdicts bear on
    /// them: the matrix's figure, then those covered by a check of the run, judged, and broken.
    fn requirements_json(&self) -> Value {
        use crate::requirements::{of_run, Judgement};
        let run = of_run(self.edition, |id| {
            let r = self.results.iter().find(|r| r.info.id == id)?;
            Some(match r.verdict {
                Verdict::Pass | Verdict::StaleBaseline { .. } => Judgement::Held,
                Verdict::Fail(_) | Verdict::KnownFailing { .. } => Judgement::Broken,
                _ => Judgement::NotJudged,
            })
        });
        let m = run.matrix;
        json!({
            "total": m.total(), "covered": m.covered, "excluded": m.excluded, "open": m.open,
            "open_must": m.open_must, "in_run": run.in_run, "judged": run.judged,
            "broken": run.broken,
        })
    }
}

/// Check ids as a JSON array of their ids.
fn ids(v: &[CheckId]) -> Value {
    v.iter().map(|c| Value::from(c.as_str())).collect()
}

/// The structured fields of a failure, for the JSON report.
fn failure_json(f: &Failure) -> Value {
    let mut v = json!({
        "kind": f.kind.name(),
        "reason": f.reason,
        "case": f.case,
        "expected": f.expected,
        "closest": f.closest,
        "difference": f.difference.as_ref().map(ToString::to_string),
        "evidence": f.difference.as_ref().map(evidence_json),
        "stdout_line": f.stdout_line,
        "stderr_tail": f.stderr_tail,
        "details": f.details,
        "model_stub_log": f.model_log,
    });
    if let Some(w) = &f.wire_log {
        v["wire_log"] = wire_log_json(w);
    }
    v
}

/// A difference's typed fields, which the HTML page marks the frame by.
fn evidence_json(d: &crate::rules::evidence::Difference) -> Value {
    json!({
        "pointer": d.pointer,
        "note": d.note,
        "expected": d.expected,
        "got": d.got,
        "value": d.value,
        "member": d.member,
    })
}

/// A case's wire log: its lines (time from the case's start, direction, text) and what was
/// left out.
fn wire_log_json(w: &crate::runner::WireLog) -> Value {
    json!({
        "lines": w.lines.iter().map(|l| {
            let mut line = json!({
                "t_ms": l.at.as_millis() as u64,
                "dir": l.dir.name(),
                "text": l.text,
            });
            if l.clipped {
                line["clipped"] = json!(true);
            }
            if let Some(n) = l.peer {
                line["peer"] = json!(n);
            }
            line
        }).collect::<Vec<_>>(),
        "dropped_lines": w.dropped_lines,
        "dropped_bytes": w.dropped_bytes,
        "incomplete": w.incomplete,
    })
}
