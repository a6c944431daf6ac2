//! The matrix as `check --list --requirements` prints it: per section, each requirement of the
//! edition with its state, then the section's coverage; the total last. Or as JSON.

use super::{all, chapter, Coverage, Requirement, State};
use crate::edition::Edition;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The requirements that apply to `edition`, in document order.
pub fn of_edition(edition: Edition) -> impl Iterator<Item = &'static Requirement> {
    all().iter().filter(move |r| r.editions.contains(edition))
}

/// Coverage per top-level section (`2`, `3`, …, in document order), then the total.
pub fn coverage(edition: Edition) -> (Vec<(&'static str, Coverage)>, Coverage) {
    let mut per: Vec<(&'static str, Coverage)> = Vec::new();
    for r in of_edition(edition) {
        let ch = chapter(r.section);
        if per.last().map(|(c, _)| *c) != Some(ch) {
            per.push((ch, Coverage::default()));
        }
        let slot = &mut per.last_mut().expect("pushed").1;
        *slot = slot.plus(r);
    }
    (per, Coverage::of(of_edition(edition)))
}

/// The human table.
pub fn text(edition: Edition) -> String {
    let mut out = String::new();
    let mut section = "";
    for r in of_edition(edition) {
        if r.section != section {
            section = r.section;
            let _ = writeln!(out, "\n§{section}");
        }
        let state = match &r.state {
            State::Covered(c) => format!("covered by {}", crate::check::list(c)),
            State::Excluded(why) => format!("excluded: {why}"),
            State::Open(what) => format!("OPEN: {what}"),
        };
        let _ = writeln!(
            out,
            "  {:<44} {:<6} {}\n  {:<51} {state}",
            r.id, r.level, r.text, ""
        );
    }
    let (per, total) = coverage(edition);
    let _ = writeln!(out, "\ncoverage of edition {edition}:");
    for (ch, c) in per {
        let _ = writeln!(out, "  §{ch:<4} {c}");
    }
    let _ = writeln!(out, "  all   {total}");
    out
}

/// The JSON form: `{"edition", "requirements": [...], "coverage": {...}}`.
pub fn json(edition: Edition) -> Value {
    let reqs: Vec<Value> = of_edition(edition)
        .map(|r| {
            let mut v = json!({
                "id": r.id, "section": r.section, "level": r.level.to_string(),
                "editions": r.editions.iter().map(Edition::name).collect::<Vec<_>>(),
                "requirement": r.text, "state": r.state.name(), "link": r.link(),
            });
            match &r.state {
                State::Covered(c) => v["checks"] = json!(c),
                State::Excluded(why) => v["reason"] = json!(why),
                State::Open(what) => v["check_would"] = json!(what),
            }
            v
        })
        .collect();
    let (per, total) = coverage(edition);
    let figure = |c: &Coverage| json!({"covered": c.covered, "excluded": c.excluded, "open": c.open, "open_must": c.open_must});
    let sections: serde_json::Map<String, Value> = per
        .iter()
        .map(|(ch, c)| (format!("§{ch}"), figure(c)))
        .collect();
    json!({
        "edition": edition.name(),
        "requirements": reqs,
        "coverage": {"sections": sections, "total": figure(&total)},
    })
}

/// The coverage of `edition` as a Markdown table (README's figure).
pub fn markdown(edition: Edition) -> String {
    let mut out = String::from(
        "| Section | Requirements | Covered | Excluded | Open (of them MUST) |\n|---|---|---|---|---|\n",
    );
    let (per, total) = coverage(edition);
    let titles = crate::contract::Contract::builtin();
    for (ch, c) in per {
        let title = titles
            .resolve(&format!("§{ch}"))
            .ok()
            .and_then(|s| s.first().map(|s| s.title))
            .unwrap_or("");
        let _ = writeln!(
            out,
            "| §{ch} {title} | {} | {} | {} | {} ({}) |",
            c.total(),
            c.covered,
            c.excluded,
            c.open,
            c.open_must
        );
    }
    let _ = writeln!(
        out,
        "| **all** | **{}** | **{}** | **{}** | **{} ({})** |",
        total.total(),
        total.covered,
        total.excluded,
        total.open,
        total.open_must
    );
    out
}
