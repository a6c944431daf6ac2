//! The matrix by keyboard, with the keys pressed through the browser (DevTools input events, not
//! events a script makes up): one tab stop in the grid, arrows, Home/End and Ctrl+Home/End move
//! it, Enter or Space opens a cell's failure, Escape closes it, and a filter's hidden rows are
//! stepped over.

use super::cdp::Page;
use super::side::{side_by_side, BROKEN, KNOWN};
use super::{chromium, temp_dir, url};
use serde_json::Value;

/// Where the focus is: the matrix row's id (`THEAD` for the header) and the cell's index, then
/// the cell's id when it has one; else the focused element's tag.
const FOCUS: &str = "(function (e) { var c = e.closest('td, th'); if (!c) return e.tagName; \
    var r = c.parentElement; return (r.id || r.parentElement.tagName) + ':' + c.cellIndex + \
    (c.id ? ' ' + c.id : ''); })(document.activeElement)";

fn focus(p: &mut Page) -> String {
    p.eval(FOCUS).as_str().unwrap().to_owned()
}

/// Presses `key` (Ctrl held when `ctrl`) and returns where the focus went.
fn press(p: &mut Page, key: &str, ctrl: bool) -> String {
    p.key(key, ctrl);
    focus(p)
}

fn opened(p: &mut Page, cell: &str) -> Value {
    p.eval(&format!(
        "document.getElementById('{cell}').querySelector('details').open"
    ))
}

/// The ids of the matrix rows shown.
fn shown(p: &mut Page) -> Vec<String> {
    let v = p.eval(
        "Array.prototype.filter.call(document.querySelectorAll('table.matrix > tbody > tr'), \
         function (r) { return !r.hidden; }).map(function (r) { return r.id; })",
    );
    serde_json::from_value(v).unwrap()
}

/// Picks `verdict` in the verdict filter (as a reader's change would); returns the rows shown.
fn filter(p: &mut Page, verdict: &str) -> Vec<String> {
    pick(p, "verdict", verdict)
}

/// Picks `value` in the filter `name` (verdict, severity, section); returns the rows shown.
fn pick(p: &mut Page, name: &str, value: &str) -> Vec<String> {
    let select = format!("document.querySelector('#filters select[name={name}]')");
    p.eval(&format!(
        "(function (s) {{ s.value = '{value}'; \
         s.dispatchEvent(new Event('change', {{bubbles: true}})); }})({select})"
    ));
    assert_eq!(p.eval(&format!("{select}.value")), value);
    shown(p)
}

/// The text of cell `col` of each row shown (1: severity, 2: sections).
fn shown_cells(p: &mut Page, col: usize) -> Vec<String> {
    let v = p.eval(&format!(
        "Array.prototype.filter.call(document.querySelectorAll('table.matrix > tbody > tr'), \
         function (r) {{ return !r.hidden; }}).map(function (r) {{ return r.cells[{col}].textContent; }})"
    ));
    serde_json::from_value(v).unwrap()
}

#[test]
fn the_severity_and_section_filters_show_exactly_the_rows_they_name() {
    let Some(chrome) = chromium() else { return };
    let side = side_by_side();
    let dir = temp_dir();
    let mut p = Page::open(&chrome, &dir.join("profile"), &url(&side.page));
    let all = shown(&mut p);
    let should = pick(&mut p, "severity", "SHOULD");
    let severities = shown_cells(&mut p, 1);
    assert!(!should.is_empty() && should.len() < all.len(), "{should:?}");
    assert!(
        severities.iter().all(|s| s.contains("SHOULD")),
        "{severities:?}"
    );
    let must = pick(&mut p, "severity", "MUST");
    assert_eq!(must.len() + should.len(), all.len());
    assert!(shown_cells(&mut p, 1).iter().all(|s| s.contains("MUST")));
    assert_eq!(pick(&mut p, "severity", ""), all);
    // The second section offered (the first may hold every check).
    let options = "Array.prototype.map.call(document.querySelectorAll('#filters select[name=section] option'), \
                   function (o) { return [o.value, o.textContent]; })";
    let options: Vec<(String, String)> = serde_json::from_value(p.eval(options)).unwrap();
    let (value, label) = options[2].clone();
    let rows = pick(&mut p, "section", &value);
    let sections = shown_cells(&mut p, 2);
    assert!(
        !rows.is_empty() && rows.len() < all.len(),
        "{label}: {rows:?}"
    );
    assert!(
        // A chapter names its subsections too (§3 shows §3.1).
        sections.iter().all(|s| s
            .split_whitespace()
            .any(|x| x == label || x.starts_with(&format!("{label}.")))),
        "{label}: {sections:?}"
    );
    // Filters combine: a section and a severity show what both name.
    let both = pick(&mut p, "severity", "MUST");
    assert!(
        both.iter().all(|r| rows.contains(r) && must.contains(r)),
        "{both:?}"
    );
    // And no row the section names is hidden.
    pick(&mut p, "severity", "");
    pick(&mut p, "section", "");
    let named = shown_cells(&mut p, 2)
        .iter()
        .filter(|s| {
            s.split_whitespace()
                .any(|x| x == label || x.starts_with(&format!("{label}.")))
        })
        .count();
    assert_eq!(named, rows.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// From the filters (the last tab stop before the grid), Tab enters the grid at its tab stop.
fn tab_into_grid(p: &mut Page) -> String {
    p.eval("document.querySelector('#filters select[name=section]').focus()");
    press(p, "Tab", false)
}

#[test]
fn arrow_keys_move_through_the_grid_and_enter_opens_a_failure() {
    let Some(chrome) = chromium() else { return };
    let side = side_by_side();
    let dir = temp_dir();
    let mut p = Page::open(&chrome, &dir.join("profile"), &url(&side.page));
    assert_eq!(
        p.eval("document.querySelector('table.matrix').getAttribute('role')"),
        "grid"
    );
    let stops = "document.querySelectorAll('table.matrix [tabindex=\"0\"]').length";
    assert_eq!(p.eval(stops), 1, "one tab stop in the grid");
    let rows = shown(&mut p);
    let (first, last) = (&rows[0], rows.last().unwrap());
    // Columns: the check, its severity, its sections, then one per runtime.
    let end = 2 + side.broken;
    assert_eq!(tab_into_grid(&mut p), format!("{first}:0"));
    assert_eq!(press(&mut p, "ArrowRight", false), format!("{first}:1"));
    assert_eq!(press(&mut p, "ArrowLeft", false), format!("{first}:0"));
    assert_eq!(
        press(&mut p, "ArrowLeft", false),
        format!("{first}:0"),
        "stops at the edge"
    );
    assert_eq!(
        press(&mut p, "End", false).split(' ').next().unwrap(),
        format!("{first}:{end}")
    );
    assert_eq!(press(&mut p, "Home", false), format!("{first}:0"));
    assert_eq!(press(&mut p, "ArrowUp", false), "THEAD:0");
    assert_eq!(press(&mut p, "ArrowDown", false), format!("{first}:0"));
    let corner = press(&mut p, "End", true);
    assert_eq!(corner.split(' ').next().unwrap(), format!("{last}:{end}"));
    assert_eq!(
        press(&mut p, "Home", true),
        "THEAD:0",
        "the header row is the grid's first"
    );
    assert_eq!(p.eval(stops), 1, "the tab stop moved with the focus");
    assert_eq!(press(&mut p, "ArrowDown", false), format!("{first}:0"));

    // Down to the broken runtime's failing cell: Enter opens it, Escape closes it, Space too.
    let at = rows
        .iter()
        .position(|r| *r == format!("check-{BROKEN}"))
        .unwrap();
    for _ in 0..at {
        press(&mut p, "ArrowDown", false);
    }
    let cell = format!("cell-{}-{BROKEN}", side.broken);
    assert_eq!(
        press(&mut p, "End", false),
        format!("check-{BROKEN}:{end} {cell}")
    );
    assert_eq!(opened(&mut p, &cell), false);
    assert_eq!(
        press(&mut p, "Enter", false),
        format!("check-{BROKEN}:{end} {cell}")
    );
    assert_eq!(opened(&mut p, &cell), true, "Enter opens the failure");
    let panel = p.eval(&format!(
        "(function (f) {{ return f.offsetHeight > 0 && f.textContent.indexOf('wire log') >= 0; }})\
         (document.getElementById('{cell}').querySelector('.failure'))"
    ));
    assert_eq!(panel, true, "the opened panel shows the wire log");
    assert_eq!(
        press(&mut p, "Escape", false),
        format!("check-{BROKEN}:{end} {cell}")
    );
    assert_eq!(opened(&mut p, &cell), false, "Escape closes it");
    press(&mut p, " ", false);
    assert_eq!(opened(&mut p, &cell), true, "Space opens it");
    press(&mut p, "Escape", false);
    assert_eq!(opened(&mut p, &cell), false);
    // Its summary, focused as a click leaves it: Enter toggles once, the arrows still move.
    p.eval(&format!(
        "document.getElementById('{cell}').querySelector('summary').focus()"
    ));
    press(&mut p, "Enter", false);
    assert_eq!(
        opened(&mut p, &cell),
        true,
        "the summary's Enter opens it once"
    );
    assert_eq!(
        press(&mut p, "Escape", false),
        format!("check-{BROKEN}:{end} {cell}")
    );
    assert_eq!(opened(&mut p, &cell), false);
    p.eval(&format!(
        "document.getElementById('{cell}').querySelector('summary').focus()"
    ));
    let left = press(&mut p, "ArrowLeft", false);
    assert!(
        left.starts_with(&format!("check-{BROKEN}:{} ", end - 1)),
        "{left}"
    );
    press(&mut p, "ArrowRight", false);

    // A filter hides the tab stop's row: Tab enters at the first row shown, arrows skip the rest.
    let verdict = if side.release.is_some() {
        "xfail"
    } else {
        "blocked"
    };
    let rows = filter(&mut p, verdict);
    assert!(
        !rows.is_empty() && !rows.contains(&format!("check-{BROKEN}")),
        "{rows:?}"
    );
    let entered = tab_into_grid(&mut p);
    assert!(
        entered.starts_with(&format!("{}:{end}", rows[0])),
        "{entered}, shown: {rows:?}"
    );
    for _ in 0..rows.len() {
        press(&mut p, "ArrowDown", false);
    }
    assert!(focus(&mut p).starts_with(&format!("{}:{end}", rows.last().unwrap())));
    if let Some(r) = side.release {
        // The release's known bug, opened from the keyboard: its baseline's reason.
        assert_eq!(
            rows,
            [format!("check-{KNOWN}")],
            "only the release's XFAIL is left"
        );
        let known = format!("cell-{r}-{KNOWN}");
        press(&mut p, "Home", false);
        for _ in 0..2 + r {
            press(&mut p, "ArrowRight", false);
        }
        assert_eq!(
            press(&mut p, "Enter", false),
            format!("check-{KNOWN}:{} {known}", 2 + r)
        );
        let text = p.eval(&format!("document.getElementById('{known}').innerText"));
        let text = text.as_str().unwrap();
        assert!(
            text.contains("XFAIL") && text.contains("upstream bug"),
            "{text}"
        );
        assert_eq!(opened(&mut p, &known), true);
    }
    // Not passing: the rows shown (those the table leads with) are neighbours by keyboard.
    let rows = filter(&mut p, "!pass");
    assert!(rows.len() >= 2, "{rows:?}");
    p.key("Home", true);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            press(&mut p, "ArrowDown", false),
            format!("{row}:0"),
            "row {i} shown"
        );
    }
    let back = &rows[rows.len() - 2];
    assert_eq!(press(&mut p, "ArrowUp", false), format!("{back}:0"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The 10-runtime × 70-check page by keyboard: twenty rows down and across every runtime, the
/// focus where the keys put it; the time per key press (sent, handled, answered) is printed, not
/// asserted (the machine is shared).
#[test]
fn the_keys_move_through_a_ten_runtime_page() {
    let Some(chrome) = chromium() else { return };
    let dir = temp_dir();
    let html = dsh_conformance::suite::html::page(&super::synthetic(10, 70), &Default::default());
    let page = dir.join("ten.html");
    std::fs::write(&page, html).unwrap();
    let mut p = Page::open(&chrome, &dir.join("profile"), &url(&page));
    let rows = shown(&mut p);
    assert_eq!(rows.len(), 70);
    assert_eq!(tab_into_grid(&mut p), format!("{}:0", rows[0]));
    let t = std::time::Instant::now();
    for _ in 0..20 {
        p.key("ArrowDown", false);
    }
    for _ in 0..12 {
        p.key("ArrowRight", false);
    }
    let per_key = t.elapsed() / 32;
    let at = focus(&mut p);
    assert!(at.starts_with(&format!("{}:12 cell-10-", rows[20])), "{at}");
    eprintln!(
        "html: 10 runtimes x 70 checks by keyboard: {:.1} ms a key press through the DevTools protocol",
        per_key.as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&dir);
}
