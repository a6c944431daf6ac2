//! One matrix cell: the verdict as a text label and a colour class, and, for a verdict with
//! something to say, a `<details>` that opens it (the failure, the wire log).

use super::{esc, s, slug, token};
use serde_json::Value;
use std::fmt::Write as _;

/// Writes the `<td>` of report `n` (1-based) for check `id`; `c` is its entry, if it has one.
pub(super) fn cell(out: &mut String, n: usize, id: &str, c: Option<&Value>) {
    let Some(c) = c else {
        out.push_str("<td class=\"v v-none\"><span class=\"label\">n/a</span></td>");
        return;
    };
    let verdict = s(c, "verdict");
    let sev = s(c, "severity");
    let class = format!("v v-{} sev-{}", token(verdict), token(sev));
    // The severity beside the word where it changes what the verdict means.
    let sevtag = if matches!(verdict, "FAIL" | "UNTESTABLE" | "XFAIL") {
        format!("<span class=\"sevtag\">{}</span>", esc(sev))
    } else {
        String::new()
    };
    let label = format!("<span class=\"label\">{}</span>{sevtag}", esc(verdict));
    let body = body(c);
    let _ = write!(
        out,
        "<td id=\"cell-{n}-{}\" class=\"{class}\" data-verdict=\"{}\">",
        slug(id),
        token(verdict)
    );
    if body.is_empty() {
        out.push_str(&label);
    } else {
        let _ = write!(
            out,
            "<details><summary>{label}</summary><div class=\"failure\">{body}</div></details>"
        );
    }
    out.push_str("</td>");
}

/// What the cell opens to: every field the report has, in reading order.
fn body(c: &Value) -> String {
    let mut out = String::new();
    if !s(c, "reason").is_empty() {
        let _ = write!(out, "<p class=\"reason\">{}</p>", esc(s(c, "reason")));
    }
    if !s(c, "baseline").is_empty() {
        let _ = write!(
            out,
            "<p>baseline (known failing): {}</p>",
            esc(s(c, "baseline"))
        );
    }
    if let Some(by) = c.get("blocked_by").and_then(Value::as_array) {
        let links: Vec<String> = by
            .iter()
            .filter_map(Value::as_str)
            .map(|b| format!("<a href=\"#check-{}\"><code>{}</code></a>", slug(b), esc(b)))
            .collect();
        if !links.is_empty() {
            let _ = write!(out, "<p>blocked by {}</p>", links.join(", "));
        }
    }
    if let Some(f) = c.get("failure").filter(|f| f.is_object()) {
        failure(&mut out, f);
    }
    out
}

fn failure(out: &mut String, f: &Value) {
    out.push_str("<dl>");
    let mut item = |dt: &str, dd: String| {
        let _ = write!(out, "<dt>{dt}</dt><dd>{dd}</dd>");
    };
    item("kind", esc(s(f, "kind")));
    match s(f, "case") {
        "" => {}
        // A client report's case is its scenario.
        case => match case.strip_prefix("scenario ") {
            Some(name) => item("scenario", format!("<code>{}</code>", esc(name))),
            None => item("trace", format!("<code>{}</code>", esc(case))),
        },
    }
    if !s(f, "expected").is_empty() {
        item(
            "expected (trace line)",
            format!("<pre>{}</pre>", esc(s(f, "expected"))),
        );
    }
    let line = f.get("stdout_line").and_then(Value::as_u64);
    if !s(f, "closest").is_empty() {
        let dt = match line {
            Some(n) => format!("received (stdout line {n})"),
            None => "closest frame received".to_owned(),
        };
        item(
            &dt,
            format!(
                "<pre>{}</pre>",
                highlight(s(f, "closest"), f.get("evidence"))
            ),
        );
    } else if let Some(n) = line {
        item("stdout line", n.to_string());
    }
    if !s(f, "difference").is_empty() {
        item(
            "difference",
            format!("<code>{}</code>", esc(s(f, "difference"))),
        );
    }
    if !s(f, "details").trim().is_empty() {
        item("details", format!("<pre>{}</pre>", esc(s(f, "details"))));
    }
    let stub: Vec<&str> = f
        .get("model_stub_log")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !stub.is_empty() {
        item(
            "model stub requests",
            format!("<pre>{}</pre>", esc(&stub.join("\n"))),
        );
    }
    if !s(f, "stderr_tail").trim().is_empty() {
        item(
            "runtime stderr (tail)",
            format!("<pre>{}</pre>", esc(s(f, "stderr_tail"))),
        );
    }
    if let Some(w) = f.get("wire_log").filter(|w| w.is_object()) {
        item("wire log", wire_log(w));
    }
    out.push_str("</dl>");
}

/// The case's wire log: a row per line, its time, its direction and its text.
fn wire_log(w: &Value) -> String {
    let mut out = String::new();
    let dropped = w.get("dropped_lines").and_then(Value::as_u64).unwrap_or(0);
    if dropped > 0 {
        let _ = write!(
            out,
            "<p class=\"note truncated\">truncated: the first {dropped} line{} of the case are not kept</p>",
            if dropped == 1 { "" } else { "s" }
        );
    }
    if w.get("incomplete").and_then(Value::as_bool) == Some(true) {
        out.push_str(
            "<p class=\"note truncated\">incomplete: the transcript reached its bound, later traffic was not recorded</p>",
        );
    }
    out.push_str("<table class=\"wire\"><thead><tr><th scope=\"col\">ms</th><th scope=\"col\">dir</th><th scope=\"col\">line</th></tr></thead><tbody>");
    for l in w
        .get("lines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let dir = s(l, "dir");
        let arrow = match dir {
            "sent" => "&gt;&gt; sent",
            "received" => "&lt;&lt; received",
            "event" => "** event",
            _ => "",
        };
        let arrow = match l.get("peer").and_then(Value::as_u64) {
            Some(n) => format!("{arrow} <span class=\"peer\">peer {n}</span>"),
            None => arrow.to_owned(),
        };
        let clipped = if l.get("clipped").and_then(Value::as_bool) == Some(true) {
            " <span class=\"note\">(clipped)</span>"
        } else {
            ""
        };
        let _ = write!(
            out,
            "<tr class=\"{}\"><td>{}</td><td>{arrow}</td><td>{}{clipped}</td></tr>",
            token(dir),
            l.get("t_ms").and_then(Value::as_u64).unwrap_or(0),
            esc(s(l, "text"))
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// The closest frame, escaped, with the value its difference names (the report's typed
/// `evidence`) marked where it can be found in it: `"member":V` for a member, else `V` alone.
pub(super) fn highlight(closest: &str, evidence: Option<&Value>) -> String {
    let text = |k: &str| evidence.and_then(|e| e.get(k)).and_then(Value::as_str);
    let found = text("value").filter(|v| !v.is_empty()).and_then(|got| {
        // The member's name is marked with its value where the value is the member's own (not
        // for an answer of the other kind: `error` where `result` was wanted marks the error).
        let last = text("pointer").and_then(|p| p.rsplit('/').next());
        let last = last.map(|l| l.replace("~1", "/").replace("~0", "~"));
        let own = text("member").filter(|m| last.as_deref() == Some(*m));
        let member = own.and_then(|m| serde_json::to_string(m).ok());
        let member = member.map(|m| format!("{m}:{got}"));
        let found = [member.as_deref(), Some(got)]
            .into_iter()
            .flatten()
            .find_map(|needle| closest.find(needle).map(|at| (at, needle.len())));
        found
    });
    match found {
        Some((at, len)) => format!(
            "{}<mark>{}</mark>{}",
            esc(&closest[..at]),
            esc(&closest[at..at + len]),
            esc(&closest[at + len..])
        ),
        None => esc(closest),
    }
}
