//! The HTML report: one self-contained page (inline CSS, a small inline script that filters and
//! moves through the matrix by keyboard) from one or more JSON reports (`check --format json`,
//! `docs/report.schema.json`). Root causes come first, per runtime; then a checks × runtimes
//! matrix, the checks not passing first, whose failing cells open, as `<details>`, the failure
//! the JSON report holds. Sans-IO:
//! JSON values in, a `String` out.
//!
//! Every text from a report is escaped: a runtime's stderr is hostile input.

mod cell;

use serde_json::Value;
use std::fmt::Write as _;

const CSS: &str = include_str!("page.css");
/// The filters, then the grid's keyboard navigation (which follows what the filters hide).
const SCRIPT: &str = concat!(include_str!("filter.js"), include_str!("grid.js"));

/// Where the page's section links point unless told otherwise: `docs/CONTRACT.md` of this
/// version of the kit, as docs.rs serves the published crate's files (Cargo.toml names docs.rs
/// as the crate's `documentation`, declares no repository, and packages the contract).
///
/// Absolute, because the page is a file of its own: a CI run uploads it as an artifact and a
/// reader opens it from their downloads, where a relative `docs/CONTRACT.md` resolves to nothing.
/// docs.rs shows the document as source text, so it opens at the top rather than at the
/// section; `--contract URL` points the links at a rendered copy (a repository's, or a relative
/// path for a page kept beside a checkout).
pub const CONTRACT_URL: &str = concat!(
    "https://docs.rs/crate/dsh-conformance/",
    env!("CARGO_PKG_VERSION"),
    "/source/docs/CONTRACT.md"
);

/// How the page links out.
#[derive(Debug, Clone)]
pub struct PageOptions {
    /// Where `docs/CONTRACT.md` is, absolute ([`CONTRACT_URL`] by default) or relative to the
    /// page: each check's sections link to `{contract}#sN.M`.
    pub contract: String,
    /// The page's title.
    pub title: String,
}

impl Default for PageOptions {
    fn default() -> Self {
        PageOptions {
            contract: CONTRACT_URL.into(),
            title: "dsh-conformance report".into(),
        }
    }
}

/// Escapes text for HTML content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Controls other than tab and newline are not text a page can show.
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A string safe in an `id` and a URL fragment: `[A-Za-z0-9._-]`, anything else `_`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A verdict word as a class and filter token: `FAIL` → `fail`, `NOT RUN` → `not-run`.
fn token(verdict: &str) -> String {
    slug(&verdict.to_ascii_lowercase().replace(' ', "-"))
}

/// A string member, or "".
fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The sections a check cites (`§4 §8.4`), each a link to its anchor in the contract.
fn section_links(sections: &str, opts: &PageOptions) -> String {
    let mut out = String::new();
    for (i, sec) in sections.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let num = sec.trim_start_matches('§');
        if num.len() < sec.len()
            && !num.is_empty()
            && num.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            let _ = write!(
                out,
                "<a href=\"{}#s{}\">{}</a>",
                esc(&opts.contract),
                esc(num),
                esc(sec)
            );
        } else {
            out.push_str(&esc(sec));
        }
    }
    out
}

/// The top-level sections (`§4 §8.4` → `s4 s8`), the section filter's tokens.
fn top_sections(sections: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for sec in sections.split_whitespace() {
        let top = sec.trim_start_matches('§').split('.').next().unwrap_or("");
        let t = format!("s{}", slug(top));
        if !top.is_empty() && !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// One matrix row: a check, in the order the reports first list it.
struct Row<'a> {
    id: &'a str,
    check: &'a Value,
    /// Per report, its entry for this check.
    cells: Vec<Option<&'a Value>>,
}

fn rows(reports: &[Value]) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    let mut at = std::collections::HashMap::new();
    for (ri, r) in reports.iter().enumerate() {
        for c in r
            .get("checks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = s(c, "id");
            let i = *at.entry(id).or_insert_with(|| {
                rows.push(Row {
                    id,
                    check: c,
                    cells: vec![None; reports.len()],
                });
                rows.len() - 1
            });
            rows[i].cells[ri] = Some(c);
        }
    }
    rows
}

/// The page for `reports` (each a JSON report, as `Report::json` makes it).
pub fn page(reports: &[Value], opts: &PageOptions) -> String {
    let rows = rows(reports);
    let mut out = String::with_capacity(16 * 1024 + rows.len() * reports.len() * 256);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        esc(&opts.title)
    );
    let _ = writeln!(
        out,
        "<header><h1>{}</h1><p class=\"note\">{}, {} checks. \
         <a href=\"#root-causes\">Root causes</a> · <a href=\"#matrix\">Checks × runtimes</a></p></header>",
        esc(&opts.title),
        subjects(reports),
        rows.len()
    );
    runtimes(&mut out, reports);
    root_causes(&mut out, reports, opts);
    matrix(&mut out, reports, &rows, opts);
    let _ = write!(out, "<script>\n{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// A report of `client` (its checks are all `client.*`): its column is a client, not a runtime.
fn is_client(r: &Value) -> bool {
    let ids: Vec<&str> = r
        .get("checks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| s(c, "id"))
        .collect();
    !ids.is_empty() && ids.iter().all(|id| id.starts_with("client."))
}

/// What the columns are: `3 runtimes`, `1 runtime, 2 clients`.
fn subjects(reports: &[Value]) -> String {
    let clients = reports.iter().filter(|r| is_client(r)).count();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    match (reports.len() - clients, clients) {
        (r, 0) => plural(r, "runtime"),
        (0, c) => plural(c, "client"),
        (r, c) => format!("{}, {}", plural(r, "runtime"), plural(c, "client")),
    }
}

/// A runtime's column name: `#N` and its label, its middle elided past 48 characters (commands
/// often share a long path and differ in their last arguments).
fn runtime_name(i: usize, r: &Value) -> String {
    let label: Vec<char> = s(r, "runtime").chars().collect();
    let shown: String = match label.len() {
        n if n <= 48 => label.iter().collect(),
        n => {
            let head: String = label[..16].iter().collect();
            let tail: String = label[n - 31..].iter().collect();
            format!("{head}…{tail}")
        }
    };
    format!("#{} {shown}", i + 1)
}

fn runtimes(out: &mut String, reports: &[Value]) {
    out.push_str(
        "<section id=\"runtimes\"><h2>Runtimes</h2>\n<table class=\"runtimes\"><thead><tr>\
         <th scope=\"col\">#</th><th scope=\"col\">runtime or client (command)</th><th scope=\"col\">edition</th>\
         <th scope=\"col\">outcome</th><th scope=\"col\">summary</th><th scope=\"col\">time</th>\
         </tr></thead><tbody>\n",
    );
    for (i, r) in reports.iter().enumerate() {
        let sum = r.get("summary").cloned().unwrap_or(Value::Null);
        let n = |k: &str| sum.get(k).and_then(Value::as_u64).unwrap_or(0);
        let mut line = format!("{} passed, {} failed", n("passed"), n("failed"));
        for (k, what) in [
            ("blocked", "blocked"),
            ("not_testable", "not testable"),
            ("skipped", "skipped"),
            ("known_failing", "known failing"),
            ("not_run", "not run"),
        ] {
            if n(k) > 0 {
                let _ = write!(line, ", {} {what}", n(k));
            }
        }
        let mut notes = String::new();
        if let Some(st) = r.get("stopped").filter(|v| v.is_object()) {
            let _ = write!(
                notes,
                "<div><strong>STOPPED</strong>: {}</div>",
                esc(s(st, "message"))
            );
            if !s(st, "stderr_tail").trim().is_empty() {
                let _ = write!(
                    notes,
                    "<details><summary>runtime stderr (tail)</summary><pre>{}</pre></details>",
                    esc(s(st, "stderr_tail"))
                );
            }
        }
        if !s(r, "hint").is_empty() {
            let _ = write!(
                notes,
                "<div class=\"note\">note: {}</div>",
                esc(s(r, "hint"))
            );
        }
        if let Some(q) = r.get("requirements").filter(|v| v.is_object()) {
            let q = |k: &str| q.get(k).and_then(Value::as_u64).unwrap_or(0);
            let _ = write!(
                notes,
                "<div class=\"note\">requirements: {} of the {} covered ones judged, {} broken \
                 (the edition's matrix: {} requirements, {} excluded, {} open)</div>",
                q("judged"),
                q("covered"),
                q("broken"),
                q("total"),
                q("excluded"),
                q("open")
            );
        }
        let _ = writeln!(
            out,
            "<tr><td>#{}</td><td>{}<code>{}</code>{notes}</td><td>{}</td><td><span class=\"label\">{}</span></td><td>{}</td><td>{:.1} s</td></tr>",
            i + 1,
            if is_client(r) {
                "<span class=\"label\">client</span> "
            } else {
                ""
            },
            esc(s(r, "runtime")),
            esc(s(r, "edition")),
            esc(&s(r, "outcome").to_ascii_uppercase()),
            esc(&line),
            r.get("duration_ms").and_then(Value::as_u64).unwrap_or(0) as f64 / 1000.0
        );
    }
    out.push_str("</tbody></table></section>\n");
}

fn root_causes(out: &mut String, reports: &[Value], opts: &PageOptions) {
    out.push_str("<section id=\"root-causes\"><h2>Root causes: fix these first</h2>\n");
    for (i, r) in reports.iter().enumerate() {
        let causes: &[Value] = r
            .get("root_causes")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let _ = writeln!(
            out,
            "<h3>{} <span class=\"note\">({} root cause{})</span></h3>",
            esc(&runtime_name(i, r)),
            causes.len(),
            if causes.len() == 1 { "" } else { "s" }
        );
        if causes.is_empty() {
            out.push_str("<p class=\"note\">None.</p>\n");
            continue;
        }
        let _ = writeln!(out, "<ol class=\"causes\" data-runtime=\"{}\">", i + 1);
        for c in causes {
            let id = s(c, "check");
            let blocks: Vec<&str> = c
                .get("blocks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let blocks = if blocks.is_empty() {
                String::new()
            } else {
                format!(
                    " <span class=\"note\">blocks {}: {}</span>",
                    blocks.len(),
                    blocks
                        .iter()
                        .map(|b| format!("<a href=\"#check-{}\">{}</a>", slug(b), esc(b)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let _ = writeln!(
                out,
                "<li><a href=\"#cell-{}-{}\"><code>{}</code></a> <span class=\"label\">{}</span> \
                 <span class=\"sevtag\">{}</span> {}: {}{blocks}</li>",
                i + 1,
                slug(id),
                esc(id),
                esc(s(c, "verdict")),
                esc(s(c, "severity")),
                section_links(s(c, "section"), opts),
                esc(s(c, "reason"))
            );
        }
        out.push_str("</ol>\n");
    }
    out.push_str("</section>\n");
}

/// Where a verdict puts its row in the matrix, first to last: a failure (or a stale baseline:
/// both fail the run), a check that could not be judged, one not judged because of another
/// (blocked, not run), a known failure, then the rest (pass, skip, n/a).
fn urgency(verdict: &str) -> u8 {
    match verdict {
        "FAIL" | "STALE" => 0,
        "UNTESTABLE" => 1,
        "BLOCKED" | "NOT RUN" => 2,
        "XFAIL" => 3,
        _ => 4,
    }
}

/// The matrix's rows, those not passing in some column first: each row by its most urgent
/// cell ([`urgency`]), in the reports' order within a group. A reader opening the page lands on
/// what needs fixing, without a filter hiding anything (the verdict filter's "not passing" then
/// shows exactly the rows above the first passing one).
fn matrix_order<'r, 'a>(rows: &'r [Row<'a>]) -> Vec<&'r Row<'a>> {
    let mut order: Vec<&Row<'_>> = rows.iter().collect();
    order.sort_by_key(|row| {
        (row.cells.iter().flatten())
            .map(|c| urgency(s(c, "verdict")))
            .min()
            .unwrap_or(4)
    });
    order
}

fn matrix(out: &mut String, reports: &[Value], rows: &[Row<'_>], opts: &PageOptions) {
    out.push_str("<section id=\"matrix\"><h2>Checks × runtimes</h2>\n");
    out.push_str(
        "<p class=\"note\">Checks not passing come first: failing, then untestable, blocked or \
         not run, then known failing; the passing and skipped ones after them.</p>\n",
    );
    // The filters: hidden until the script shows them (without it, everything is visible).
    let mut verdicts: Vec<String> = Vec::new();
    let mut sections: Vec<(u32, String)> = Vec::new();
    for row in rows {
        for c in row.cells.iter().flatten() {
            let t = s(c, "verdict").to_owned();
            if !verdicts.contains(&t) {
                verdicts.push(t);
            }
        }
        for t in top_sections(s(row.check, "section")) {
            let n = t[1..].parse().unwrap_or(u32::MAX);
            if !sections.iter().any(|(_, x)| *x == t) {
                sections.push((n, t));
            }
        }
    }
    sections.sort();
    out.push_str(
        "<form id=\"filters\" class=\"filters\" hidden>\
         <label>Verdict <select name=\"verdict\"><option value=\"\">any</option>\
         <option value=\"!pass\">not passing</option>",
    );
    for v in &verdicts {
        let _ = write!(out, "<option value=\"{}\">{}</option>", token(v), esc(v));
    }
    out.push_str(
        "</select></label><label>Severity <select name=\"severity\"><option value=\"\">any</option>\
         <option value=\"MUST\">MUST</option><option value=\"SHOULD\">SHOULD</option></select></label>\
         <label>Section <select name=\"section\"><option value=\"\">any</option>",
    );
    for (_, t) in &sections {
        let _ = write!(out, "<option value=\"{t}\">§{}</option>", &t[1..]);
    }
    out.push_str("</select></label><span id=\"shown\" aria-live=\"polite\"></span></form>\n");
    out.push_str(
        "<table class=\"matrix\"><thead><tr><th scope=\"col\">check</th><th scope=\"col\">severity</th>\
         <th scope=\"col\">section</th>",
    );
    for (i, r) in reports.iter().enumerate() {
        let _ = write!(
            out,
            "<th scope=\"col\" title=\"{}\">{}</th>",
            esc(s(r, "runtime")),
            esc(&runtime_name(i, r))
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in matrix_order(rows) {
        let mut tokens: Vec<String> = Vec::new();
        for c in &row.cells {
            let t = c.map_or("none".to_owned(), |c| token(s(c, "verdict")));
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        let sev = s(row.check, "severity");
        let _ = write!(
            out,
            "<tr id=\"check-{}\" data-verdicts=\"{}\" data-severity=\"{}\" data-sections=\"{}\">\
             <th scope=\"row\"><code>{}</code><div class=\"rule\">{}</div></th><td>{}</td><td>{}</td>",
            slug(row.id),
            tokens.join(" "),
            esc(sev),
            top_sections(s(row.check, "section")).join(" "),
            esc(row.id),
            esc(s(row.check, "rule")),
            esc(sev),
            section_links(s(row.check, "section"), opts)
        );
        for (i, c) in row.cells.iter().enumerate() {
            cell::cell(out, i + 1, row.id, *c);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></section>\n");
}

#[cfg(test)]
mod tests;
