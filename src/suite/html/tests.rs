use super::*;
use crate::suite::report::tests::report;
use crate::suite::verdict::Verdict;

/// The test report (a pass, a SHOULD failure, a skip, a known failure) as JSON, its failure
/// given the fields a trace failure has.
fn json() -> Value {
    let mut rep = report();
    if let Verdict::Fail(f) = &mut rep.results[1].verdict {
        f.case = Some("fixtures/checks/frame.cr-not-separator.trace".into());
        f.expected = Some("(fixtures/checks/frame.cr-not-separator.trace:9): << {\"id\":1}".into());
        f.closest = Some(r#"{"jsonrpc":"2.0","id":1,"result":{"status":"running"}}"#.into());
        f.difference = Some(crate::rules::evidence::Difference::at(
            "/result/status",
            "\"idle\"",
            "\"running\"",
        ));
        f.stdout_line = Some(3);
        f.model_log = vec!["POST /v1/messages".into()];
    }
    rep.json()
}

#[test]
fn the_page_is_self_contained_with_root_causes_before_the_matrix() {
    let page = page(&[json()], &PageOptions::default());
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    for external in ["src=\"http", "<link", "@import", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }
    // Links out are the contract's, nothing else.
    for (at, _) in page.match_indices("href=\"http") {
        assert!(
            page[at + 6..].starts_with(CONTRACT_URL),
            "{}",
            &page[at..at + 80]
        );
    }
    let causes = page.find("id=\"root-causes\"").unwrap();
    let matrix = page.find("id=\"matrix\"").unwrap();
    assert!(causes < matrix);
    // The SHOULD failure is the root cause, linked to its cell and its contract section.
    let list = &page[causes..matrix];
    assert!(
        list.contains("<a href=\"#cell-1-frame.cr-not-separator\">"),
        "{list}"
    );
    assert!(
        list.contains(&format!("<a href=\"{CONTRACT_URL}#s2.1\">§2.1</a>")),
        "{list}"
    );
}

#[test]
fn section_links_are_absolute_so_a_downloaded_page_keeps_them() {
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        CONTRACT_URL,
        format!("https://docs.rs/crate/dsh-conformance/{version}/source/docs/CONTRACT.md")
    );
    let page = page(&[json()], &PageOptions::default());
    assert!(!page.contains("href=\"docs/"), "a relative link is left");
    assert!(page.contains(&format!("<a href=\"{CONTRACT_URL}#s2.1\">§2.1</a>")));
    // Another copy of the contract, as `--contract URL` gives it.
    let opts = PageOptions {
        contract: "https://example.org/docs/CONTRACT.md".into(),
        ..PageOptions::default()
    };
    let page = super::page(&[json()], &opts);
    assert!(page.contains("<a href=\"https://example.org/docs/CONTRACT.md#s2.1\">§2.1</a>"));
}

/// The ids of the matrix's rows, in the page's order.
fn row_order(page: &str) -> Vec<&str> {
    page.split("<tr id=\"check-")
        .skip(1)
        .map(|r| &r[..r.find('"').unwrap()])
        .collect()
}

#[test]
fn the_matrix_opens_on_the_checks_not_passing() {
    let mut v = json();
    let checks = v["checks"].as_array_mut().unwrap();
    let mut row = |id: &str, verdict: &str| {
        let mut c = checks[0].clone();
        c["id"] = id.into();
        c["verdict"] = verdict.into();
        checks.push(c);
    };
    row("a.passes", "PASS");
    row("b.untestable", "UNTESTABLE");
    row("c.blocked", "BLOCKED");
    row("d.fails", "FAIL");
    row("e.stale", "STALE");
    let page = page(&[v], &PageOptions::default());
    // The test report's own rows: a pass, a SHOULD failure, a skip, a known failure.
    assert_eq!(
        row_order(&page),
        [
            "frame.cr-not-separator",
            "d.fails",
            "e.stale",
            "b.untestable",
            "c.blocked",
            "error.unknown-method",
            "stdout.frames-only",
            "turn.overlap-rejected",
            "a.passes",
        ]
    );
    assert!(page.contains("Checks not passing come first"));
}

#[test]
fn a_row_goes_by_its_most_urgent_column() {
    let a = json();
    let mut b = json();
    // The first report passes everything the second fails: the row still comes first.
    b["checks"][0]["verdict"] = "FAIL".into();
    let page = page(&[a, b], &PageOptions::default());
    let order = row_order(&page);
    assert_eq!(
        &order[..2],
        ["stdout.frames-only", "frame.cr-not-separator"]
    );
}

#[test]
fn cells_carry_a_text_label_a_severity_aware_class_and_open_the_failure() {
    let page = page(&[json()], &PageOptions::default());
    let at = page
        .find("<td id=\"cell-1-frame.cr-not-separator\"")
        .unwrap();
    let cell = &page[at..at + page[at..].find("</td>").unwrap()];
    assert!(cell.contains("class=\"v v-fail sev-should\""), "{cell}");
    assert!(
        cell.contains("<summary><span class=\"label\">FAIL</span><span class=\"sevtag\">SHOULD</span></summary>"),
        "{cell}"
    );
    for field in [
        "<dt>expected (trace line)</dt>",
        "frame.cr-not-separator.trace:9",
        "<dt>received (stdout line 3)</dt>",
        "<mark>&quot;status&quot;:&quot;running&quot;</mark>",
        "POST /v1/messages",
        "got &lt;x&gt; &amp; \\u{1}",
    ] {
        assert!(cell.contains(field), "{field} not in {cell}");
    }
    let pass = page.find("<td id=\"cell-1-stdout.frames-only\"").unwrap();
    assert!(page[pass..].starts_with(
        "<td id=\"cell-1-stdout.frames-only\" class=\"v v-pass sev-must\" data-verdict=\"pass\"><span class=\"label\">PASS</span></td>"
    ));
    // A MUST failure is coloured apart from a SHOULD one.
    let mut must = json();
    must["checks"][1]["severity"] = "MUST".into();
    let page = super::page(&[must], &PageOptions::default());
    assert!(page.contains("class=\"v v-fail sev-must\""));
}

#[test]
fn runtimes_side_by_side_share_rows_and_a_check_one_report_lacks_is_na() {
    let a = json();
    let mut b = json();
    b["runtime"] = "./other".into();
    b["checks"].as_array_mut().unwrap().remove(0);
    let page = page(&[a, b], &PageOptions::default());
    assert_eq!(
        page.matches("<tr id=\"check-").count(),
        4,
        "one row per check"
    );
    assert!(page.contains("<th scope=\"col\" title=\"./other\">#2 ./other</th>"));
    let row = page.find("<tr id=\"check-stdout.frames-only\"").unwrap();
    let row = &page[row..row + page[row..].find("</tr>").unwrap()];
    assert!(row.contains("data-verdicts=\"pass none\""), "{row}");
    assert!(row.contains("<td class=\"v v-none\"><span class=\"label\">n/a</span></td>"));
}

#[test]
fn hostile_runtime_output_is_text_not_markup() {
    let mut v = json();
    let evil = "</pre></details><script>alert('x')</script><img src=x onerror=alert(1)>";
    v["runtime"] = evil.into();
    v["checks"][1]["failure"]["stderr_tail"] = evil.into();
    v["checks"][1]["failure"]["closest"] = evil.into();
    v["checks"][1]["reason"] = evil.into();
    v["checks"][1]["id"] = "x\" onmouseover=\"alert(1)".into();
    let page = page(&[v], &PageOptions::default());
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!page.contains("<img"));
    assert!(!page.contains("\" onmouseover"));
    assert!(page.contains("&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;alert(&#39;x&#39;)"));
}

#[test]
fn the_difference_is_marked_in_the_closest_frame_where_it_is_found() {
    use serde_json::json;
    let c = r#"{"a":"x","b":{"a":"y"}}"#;
    let ev = json!({"pointer": "/b/a", "expected": "\"z\"", "got": "\"y\"", "value": "\"y\"", "member": "a"});
    assert_eq!(
        cell::highlight(c, Some(&ev)),
        esc(r#"{"a":"x","b":{"#) + "<mark>" + &esc(r#""a":"y""#) + "</mark>" + &esc("}}")
    );
    let ev = json!({"pointer": "/q", "value": "7", "member": "q"});
    assert_eq!(cell::highlight(c, Some(&ev)), esc(c));
    // A result expected, an error received: the error is marked.
    let e = r#"{"id":1,"error":{"code":-1}}"#;
    let ev = json!({"pointer": "/result", "value": "{\"code\":-1}", "member": "error"});
    assert_eq!(
        cell::highlight(e, Some(&ev)),
        esc(r#"{"id":1,"error":"#) + "<mark>" + &esc(r#"{"code":-1}"#) + "</mark>" + &esc("}")
    );
    // A report without evidence (an older one) marks nothing.
    assert_eq!(cell::highlight("<b>", None), "&lt;b&gt;");
}

#[test]
fn a_wire_log_shows_its_lines_and_its_truncation() {
    let mut v = json();
    v["checks"][1]["failure"]["wire_log"] = serde_json::json!({
        "dropped_lines": 7, "dropped_bytes": 300,
        "lines": [
            {"t_ms": 1, "dir": "sent", "text": "{\"id\":1}"},
            {"t_ms": 4, "dir": "received", "text": "<b>", "clipped": true},
        ],
    });
    let page = page(&[v], &PageOptions::default());
    assert!(page.contains("the first 7 lines of the case are not kept"));
    assert!(page.contains(
        "<tr class=\"sent\"><td>1</td><td>&gt;&gt; sent</td><td>{&quot;id&quot;:1}</td></tr>"
    ));
    assert!(page.contains("<td>&lt;b&gt; <span class=\"note\">(clipped)</span></td>"));
}

#[test]
fn filters_are_hidden_without_the_script_and_list_what_the_page_holds() {
    let page = page(&[json()], &PageOptions::default());
    assert!(page.contains("<form id=\"filters\" class=\"filters\" hidden>"));
    for opt in [
        "<option value=\"fail\">FAIL</option>",
        "<option value=\"xfail\">XFAIL</option>",
        "<option value=\"s2\">§2</option>",
    ] {
        assert!(page.contains(opt), "{opt}");
    }
}

#[test]
fn a_client_report_is_a_client_column_whose_wire_log_names_its_peers() {
    let client = serde_json::json!({
        "schema": "dsh-conformance/report/v2",
        "runtime": "python3 driver.py {runtime}",
        "summary": {"passed": 0, "failed": 1},
        "outcome": "findings",
        "root_causes": [{"check": "client.subagent-trees", "severity": "MUST", "section": "§15.8",
                         "verdict": "FAIL", "reason": "ended early", "blocks": []}],
        "checks": [{"id": "client.subagent-trees", "section": "§15.8", "severity": "MUST",
                    "verdict": "FAIL", "reason": "ended early",
                    "failure": {"kind": "rule", "reason": "ended early", "case": "scenario subagent-trees",
                                "wire_log": {"dropped_lines": 0, "dropped_bytes": 0, "incomplete": false, "lines": [
                                    {"t_ms": 0, "dir": "event", "peer": 2, "text": "launched: --profile sdk"},
                                    {"t_ms": 3, "dir": "sent", "peer": 2, "text": "{\"id\":1}"}]}}}],
    });
    let page = page(&[json(), client], &PageOptions::default());
    assert!(page.contains("1 runtime, 1 client, "), "{page}");
    assert!(page.contains(
        "<td><span class=\"label\">client</span> <code>python3 driver.py {runtime}</code>"
    ));
    assert!(page.contains(
        "<tr class=\"event\"><td>0</td><td>** event <span class=\"peer\">peer 2</span></td><td>launched: --profile sdk</td></tr>"
    ), "{page}");
    assert!(page.contains("<td>&gt;&gt; sent <span class=\"peer\">peer 2</span></td>"));
    // A runtime's report is not called a client.
    assert!(page.contains("<td><code>./rt --profile sdk</code>"));
}

#[test]
fn a_long_command_keeps_its_start_and_its_distinct_end_in_a_column_name() {
    let r = serde_json::json!({"runtime": "/home/someone/work/target/debug/dsh-conformance client-driver --bug first-idle"});
    assert_eq!(
        runtime_name(1, &r),
        "#2 /home/someone/wo… client-driver --bug first-idle"
    );
    let short = serde_json::json!({"runtime": "./rt --profile sdk"});
    assert_eq!(runtime_name(0, &short), "#1 ./rt --profile sdk");
}
