//! The HTML report as a reader sees it: built by the command line for the reference runtime, the
//! release and a broken one side by side ([`side`]), loaded in headless Chromium (its DOM after the
//! script ran, with scripts off, a screenshot, and key presses through the DevTools protocol:
//! [`cdp`], [`keys`]). Without Chromium these tests skip with a reason, except under
//! `CI=true`, where they fail (`.ci/run` installs it).

mod cdp;
mod keys;
mod side;

use super::{KIT, RUNTIME};
use assert_cmd::Command;
use serde_json::{json, Value};
use side::{side_by_side, BROKEN, KNOWN};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Chromium on PATH; `None` (after saying why) when it is missing outside CI.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let ci = std::env::var("CI").unwrap_or_default();
    assert!(
        ci.is_empty() || ci == "false" || ci == "0",
        "CI={ci}: headless Chromium is needed for the HTML report's browser tests (apt-get install chromium)"
    );
    eprintln!("skipped: no chromium on PATH (apt-get install chromium); the HTML page was not loaded in a browser");
    None
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dsh-suite-html-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs headless Chromium on `url` with `args` (a profile of its own in `dir`, killed after a
/// minute); returns its stdout.
fn browse(chrome: &Path, dir: &Path, args: &[&str], url: &str) -> String {
    let mut child = std::process::Command::new(chrome)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .arg(url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let until = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            panic!("chromium did not finish with {url} in 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    reader.join().unwrap()
}

fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The text from `start` to the next `end` in `page`.
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let at = page
        .find(start)
        .unwrap_or_else(|| panic!("{start} not in the page"));
    let len = page[at..].find(end).unwrap_or(page.len() - at);
    &page[at..at + len]
}

#[test]
fn the_page_of_the_reference_the_release_and_a_broken_runtime_reads_in_a_browser() {
    let Some(chrome) = chromium() else { return };
    let dir = temp_dir();
    let side = side_by_side();
    let page = &side.page;
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&side.broken_report).unwrap()).unwrap();
    let failing = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == BROKEN)
        .expect("the broken check is in the report");
    let wire = &failing["failure"]["wire_log"];
    assert!(
        wire["lines"].as_array().is_some_and(|l| l.len() > 3),
        "the JSON report keeps the case's wire log: {failing:#}"
    );

    // With the script: a link to the failing cell opens it, the filters show.
    let broken = side.broken;
    let cell = format!("cell-{broken}-{BROKEN}");
    let dom = browse(
        &chrome,
        &dir,
        &["--dump-dom"],
        &format!("{}#{cell}", url(page)),
    );
    let causes = between(
        &dom,
        &format!("<ol class=\"causes\" data-runtime=\"{broken}\">"),
        "</ol>",
    );
    assert!(
        causes.contains(&format!("<code>{BROKEN}</code>")),
        "{causes}"
    );
    assert!(
        !dom.contains("<ol class=\"causes\" data-runtime=\"1\">"),
        "the reference has no root causes"
    );
    let td = between(&dom, &format!("<td id=\"{cell}\""), "</details></td>");
    assert!(td.contains("class=\"v v-fail sev-must\""), "{td}");
    assert!(
        td.contains("<summary tabindex=\"-1\"><span class=\"label\">FAIL</span><span class=\"sevtag\">MUST</span></summary>"),
        "{td}"
    );
    assert!(
        td.contains("<details open=\"\">"),
        "the link opened it: {td}"
    );
    for seen in [
        "<dt>expected (trace line)</dt>",
        "status.idle-after-turn.trace:",
        "<dt>wire log</dt>",
        "&gt;&gt; sent",
        "session/prompt",
        "&lt;&lt; received",
        // The runtime's markup is text in its stderr tail.
        "&lt;script&gt;document.body.setAttribute",
        // The closest frame, its smallest difference highlighted.
        "<dt>closest frame received</dt>",
        "<mark>\"status\":\"running\"</mark>",
        "<dt>difference</dt>",
    ] {
        assert!(td.contains(seen), "{seen} not in the opened cell: {td}");
    }
    assert!(
        dom.contains("<form id=\"filters\" class=\"filters\">"),
        "the script shows the filters"
    );
    // The matrix opens on the failing check (every row shown: counted below).
    let first = dom.split("<tr id=\"check-").nth(1).unwrap_or("");
    assert!(
        first.starts_with(&format!("{BROKEN}\"")),
        "the first row: {}",
        &first[..first.len().min(200)]
    );
    let rows = dom.matches("<tr id=\"check-").count();
    assert!(
        dom.contains(&format!("{rows} of {rows} checks shown")),
        "the filter counts the rows"
    );
    assert!(
        !dom.contains("<body data-pwned"),
        "the runtime's script ran"
    );
    assert!(
        !dom.contains("<img"),
        "the runtime's markup became elements"
    );

    // Scripts off: the matrix and the failures are plain HTML; the filters stay hidden.
    // (`--blink-settings=scriptEnabled=false` also stops the evaluation `--dump-dom` makes, so
    // the page's own policy forbids its script instead: the browser then runs none of it.)
    if let Some(r) = side.release {
        release_column(&dom, r);
    }

    let html = std::fs::read_to_string(page).unwrap();
    let policy = "script-src 'unsafe-inline'";
    assert!(html.contains(policy));
    let no_script = dir.join("no-script.html");
    std::fs::write(&no_script, html.replace(policy, "script-src 'none'")).unwrap();
    let plain = browse(&chrome, &dir, &["--dump-dom"], &url(&no_script));
    assert!(plain.contains("<form id=\"filters\" class=\"filters\" hidden=\"\">"));
    assert!(plain.contains("<span id=\"shown\" aria-live=\"polite\"></span>"));
    let td = between(&plain, &format!("<td id=\"{cell}\""), "</details></td>");
    assert!(
        td.contains("<details>") && td.contains("<dt>wire log</dt>"),
        "{td}"
    );
    assert_eq!(
        plain.matches("<tr id=\"check-").count(),
        dom.matches("<tr id=\"check-").count()
    );

    // The screenshot of the page, its failing cell opened, is not a blank render.
    let opened = html.replacen(
        &format!("<td id=\"{cell}\""),
        &format!("<td data-opened id=\"{cell}\""),
        1,
    );
    let at = opened.find("<td data-opened").unwrap();
    let opened = format!(
        "{}{}",
        &opened[..at],
        opened[at..].replacen("<details>", "<details open>", 1)
    );
    let opened_page = dir.join("opened.html");
    std::fs::write(&opened_page, opened).unwrap();
    let blank_page = dir.join("blank.html");
    std::fs::write(&blank_page, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let shot = |page: &Path, png: &str| {
        let png = dir.join(png);
        let arg = format!("--screenshot={}", png.display());
        browse(
            &chrome,
            &dir,
            &[&arg, "--window-size=1280,1600"],
            &url(page),
        );
        std::fs::read(&png).expect("chromium wrote the screenshot")
    };
    let png = shot(&opened_page, "page.png");
    let blank = shot(&blank_page, "blank.png");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        png.len() > 10 * blank.len(),
        "the screenshot looks blank: {} bytes, a blank render {} bytes",
        png.len(),
        blank.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The release's column in the page's DOM: its header, the XFAIL of its known bug with the
/// baseline's reason, a pass where the broken runtime fails, and no cell for the checks it was not
/// run on.
fn release_column(dom: &str, r: usize) {
    let heads: Vec<&str> = dom.split("<th scope=\"col\" title=\"").skip(1).collect();
    let head = heads[r - 1];
    assert!(
        head.contains("deepseek-harness-sdk-runtime-linux-x64 --profile sdk"),
        "{head}"
    );
    let td = between(
        dom,
        &format!("<td id=\"cell-{r}-{KNOWN}\""),
        "</details></td>",
    );
    assert!(td.contains("class=\"v v-xfail sev-should\""), "{td}");
    assert!(
        td.contains("<span class=\"label\">XFAIL</span><span class=\"sevtag\">SHOULD</span>"),
        "{td}"
    );
    assert!(
        td.contains("baseline (known failing): upstream bug"),
        "{td}"
    );
    assert!(td.contains("cannot encode an empty path segment"), "{td}");
    // The received frame by its stdout line, its difference marked. (Whether the stub's
    // requests are attached depends on when the release's model request lands: unit-tested.
    // So does the line's number: how many of the turn's events precede the answer.)
    for seen in ["<dt>received (stdout line ", "<mark>{\"code\":-32603"] {
        assert!(td.contains(seen), "{seen} not in the release's cell: {td}");
    }
    let pass = between(dom, &format!("<td id=\"cell-{r}-{BROKEN}\""), "</td>");
    assert!(pass.contains("<span class=\"label\">PASS</span>"), "{pass}");
    let causes = between(dom, &format!("<h3>#{r} "), "</h3>");
    assert!(causes.contains("(0 root causes)"), "{causes}");
    let not_run = dom.matches("<td class=\"v v-none\"").count();
    let rows = dom.matches("<tr id=\"check-").count();
    assert_eq!(
        not_run,
        rows - 3,
        "the release ran 3 checks: the others are n/a in its column alone"
    );
}

#[test]
fn check_format_html_writes_the_page_of_one_run() {
    let Some(chrome) = chromium() else { return };
    let dir = temp_dir();
    let page = dir.join("one.html");
    Command::new(KIT)
        .args([
            "check",
            "--filter",
            "frame.cr-not-separator",
            "--format",
            "html",
        ])
        .arg("--output")
        .arg(&page)
        .args(["--", KIT, "mutant", "cr-as-separator", "--", RUNTIME])
        .assert()
        .code(0);
    let dom = browse(&chrome, &dir, &["--dump-dom"], &url(&page));
    let td = between(
        &dom,
        "<td id=\"cell-1-frame.cr-not-separator\"",
        "</details></td>",
    );
    assert!(td.contains("class=\"v v-fail sev-should\""), "{td}");
    assert!(td.contains("<dt>wire log</dt>"), "{td}");
    assert!(dom.contains("1 of 1 checks shown"));
    // The run's requirements: those of its one check, judged and broken.
    let n = dsh_conformance::requirements::of_check(
        dsh_conformance::check::CheckId::FrameCrNotSeparator,
    )
    .filter(|r| {
        r.editions
            .contains(dsh_conformance::edition::Edition::Current)
    })
    .count();
    assert!(dom.contains(&format!("requirements: {n} of the ")), "{dom}");
    assert!(
        dom.contains(&format!(" covered ones judged, {n} broken")),
        "{dom}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_page_of_the_reference_client_and_a_broken_one_opens_the_failure_s_wire_log() {
    let Some(chrome) = chromium() else { return };
    let dir = temp_dir();
    let scenario = ["client", "--format", "json", "--scenario", "subagent-trees"];
    for (name, bug, code) in [("good", None, 0), ("broken", Some("first-idle"), 1)] {
        Command::new(KIT)
            .args(scenario)
            .arg("--output")
            .arg(dir.join(format!("{name}.json")))
            .args(["--", KIT, "client-driver"])
            .args(bug.map(|b| ["--bug", b]).into_iter().flatten())
            .assert()
            .code(code);
    }
    let page = dir.join("clients.html");
    Command::new(KIT)
        .arg("report")
        .arg("--html")
        .arg(&page)
        .args([dir.join("good.json"), dir.join("broken.json")])
        .assert()
        .code(0);
    let dom = browse(&chrome, &dir, &["--dump-dom"], &url(&page));
    assert!(dom.contains("2 clients, "), "{dom}");
    let causes = between(&dom, "id=\"root-causes\"", "id=\"matrix\"");
    assert!(causes.contains("client.subagent-trees"), "{causes}");
    let good = between(&dom, "<td id=\"cell-1-client.subagent-trees\"", "</td>");
    assert!(good.contains("PASS"), "{good}");
    let td = between(
        &dom,
        "<td id=\"cell-2-client.subagent-trees\"",
        "</details></td>",
    );
    assert!(td.contains("class=\"v v-fail sev-must\""), "{td}");
    // Its wire log: the peer's launch, the client's initialize, the peer's answer, the exit.
    for part in [
        "<dt>wire log</dt>",
        "** event <span class=\"peer\">peer 1</span></td><td>launched: --profile sdk</td>",
        r#"&gt;&gt; sent <span class="peer">peer 1</span></td><td>{"jsonrpc":"2.0","id":"ref-1","method":"initialize""#,
        "&lt;&lt; received <span class=\"peer\">peer 1</span>",
        "exited with code 0",
        "<dt>scenario</dt><dd><code>subagent-trees</code></dd>",
    ] {
        assert!(td.contains(part), "{part} not in {td}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The page's section links are absolute by default (a page downloaded from CI keeps them), and
/// `--contract URL` (or `--contract-url`) points them elsewhere, for each command that writes it.
#[test]
fn every_command_that_writes_the_page_links_the_contract_absolutely() {
    let dir = temp_dir();
    let (json, page) = (dir.join("one.json"), dir.join("one.html"));
    let base = format!(
        "https://docs.rs/crate/dsh-conformance/{}/source/docs/CONTRACT.md",
        env!("CARGO_PKG_VERSION")
    );
    let links = |p: &Path| {
        let html = std::fs::read_to_string(p).unwrap();
        assert!(!html.contains("href=\"docs/"), "a relative link is left");
        html
    };
    let run = ["check", "--filter", "frame.cr-not-separator", "--format"];
    let cmd = ["--", KIT, "mutant", "cr-as-separator", "--", RUNTIME];
    Command::new(KIT)
        .args(run)
        .args(["json", "--output"])
        .arg(&json)
        .args(cmd)
        .assert()
        .code(0);
    Command::new(KIT)
        .args(run)
        .args(["html", "--output"])
        .arg(&page)
        .args(cmd)
        .assert()
        .code(0);
    assert!(links(&page).contains(&format!("<a href=\"{base}#s2.1\">§2.1</a>")));
    Command::new(KIT)
        .args(run)
        .args(["html", "--contract", "https://example.org/c.md", "--output"])
        .arg(&page)
        .args(cmd)
        .assert()
        .code(0);
    assert!(links(&page).contains("<a href=\"https://example.org/c.md#s2.1\">§2.1</a>"));
    Command::new(KIT)
        .args(["report", "--html"])
        .arg(&page)
        .arg(&json)
        .assert()
        .code(0);
    assert!(links(&page).contains(&format!("<a href=\"{base}#s2.1\">§2.1</a>")));
    Command::new(KIT)
        .args(["report", "--contract-url", "../docs/CONTRACT.md", "--html"])
        .arg(&page)
        .arg(&json)
        .assert()
        .code(0);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("<a href=\"../docs/CONTRACT.md#s2.1\">§2.1</a>"));
    let client = dir.join("client.html");
    Command::new(KIT)
        .args(["client", "--scenario", "subagent-trees", "--format", "html"])
        .args(["--contract-url", "https://example.org/c.md", "--output"])
        .arg(&client)
        .args(["--", KIT, "client-driver"])
        .assert()
        .code(0);
    assert!(links(&client).contains("<a href=\"https://example.org/c.md#s15"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `n` reports of `checks` checks each, every fifth check failing with a 40-line wire log.
fn synthetic(n: usize, checks: usize) -> Vec<Value> {
    let verdicts = ["PASS", "PASS", "PASS", "BLOCKED", "FAIL", "SKIP", "PASS"];
    (0..n)
        .map(|r| {
            let checks: Vec<Value> = (0..checks)
                .map(|i| {
                    let verdict = verdicts[(i + r) % verdicts.len()];
                    let mut c = json!({
                        "id": format!("area{}.rule-{i}", i % 9), "section": format!("§{}.{}", i % 9, i % 4),
                        "severity": if i % 3 == 0 { "SHOULD" } else { "MUST" },
                        "editions": ["current"], "rule": "a rule of some words, as the registry writes it",
                        "verdict": verdict, "duration_ms": 12,
                    });
                    match verdict {
                        "FAIL" => {
                            c["reason"] = "the answer never arrived (waited 5.0s)".into();
                            c["failure"] = json!({
                                "kind": "timeout", "reason": "the answer never arrived", "case": "fixtures/checks/x.trace",
                                "expected": "(fixtures/checks/x.trace:14): << {\"id\":1}", "closest": "{\"jsonrpc\":\"2.0\",\"id\":2}",
                                "difference": "/id: expected 1, got 2", "stdout_line": 4, "stderr_tail": "warn: slow\n",
                                "details": "", "model_stub_log": [],
                                "wire_log": {"lines": (0..40).map(|t| json!({"t_ms": t * 3, "dir": if t % 2 == 0 { "sent" } else { "received" },
                                    "text": "{\"jsonrpc\":\"2.0\",\"method\":\"session.event\",\"params\":{\"sessionId\":\"s1\"}}"})).collect::<Vec<_>>(),
                                    "dropped_lines": 0, "dropped_bytes": 0, "incomplete": false},
                            });
                        }
                        "BLOCKED" => { c["reason"] = "blocked".into(); c["blocked_by"] = json!(["area0.rule-0"]); }
                        "SKIP" => c["reason"] = "not in edition".into(),
                        _ => {}
                    }
                    c
                })
                .collect();
            json!({"schema": "dsh-conformance/report/v2", "runtime": format!("./runtime-{r}"), "edition": "current",
                   "duration_ms": 9000, "summary": {}, "outcome": "findings", "root_causes": [], "checks": checks})
        })
        .collect()
}

/// The figure issue 24 asks for: a 10-runtime × 70-check page, its size and the time headless
/// Chromium takes to load it and dump its DOM (printed, not asserted: the machine is shared).
#[test]
fn a_ten_runtime_page_of_seventy_checks_loads() {
    let Some(chrome) = chromium() else { return };
    let dir = temp_dir();
    let reports = synthetic(10, 70);
    let made = Instant::now();
    let html = dsh_conformance::suite::html::page(&reports, &Default::default());
    let render = made.elapsed();
    // A probe at the end of the copy loaded: the time from navigation to the page parsed, its
    // script run and its layout done (reading offsetHeight forces the layout).
    let probe = "<script>document.body.offsetHeight;document.body.setAttribute(\"data-ready-ms\",Math.round(performance.now()));</script></body>";
    let page = dir.join("ten.html");
    std::fs::write(&page, html.replace("</body>", probe)).unwrap();
    let blank_page = dir.join("blank.html");
    std::fs::write(&blank_page, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let timed = |p: &Path| {
        let t = Instant::now();
        let dom = browse(&chrome, &dir, &["--dump-dom"], &url(p));
        (t.elapsed(), dom)
    };
    let (blank, _) = timed(&blank_page);
    let (load, dom) = timed(&page);
    assert_eq!(dom.matches("<td id=\"cell-").count(), 700);
    assert!(dom.contains("70 of 70 checks shown"));
    let ready = between(&dom, "data-ready-ms=\"", "\">")
        .trim_start_matches("data-ready-ms=\"")
        .to_owned();
    eprintln!(
        "html: 10 runtimes x 70 checks: {} KiB, rendered in {:.1} ms; in chromium parsed, scripted and laid out {ready} ms after navigation; chromium --dump-dom {:.0} ms in all (an empty page {:.0} ms)",
        html.len() / 1024,
        render.as_secs_f64() * 1e3,
        load.as_secs_f64() * 1e3,
        blank.as_secs_f64() * 1e3,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A runtime that writes much (300 stray lines and one of 5000 bytes before its frames) and
/// fails a check: the JSON report keeps that case's last lines within the bound, says how many
/// it left out and which line it clipped, and the page made from the report alone says so too.
#[test]
fn a_long_wire_log_is_kept_bounded_with_its_truncation_marked_in_the_report_and_the_page() {
    use dsh_conformance::runner::wire_log::{LINE_BYTES, MAX_LINES};
    let dir = temp_dir();
    let (json, page) = (dir.join("chatty.json"), dir.join("chatty.html"));
    let chatty = "for i in $(seq 300); do echo stray line $i; done; \
                  head -c 5000 /dev/zero | tr '\\0' x; echo; exec \"$0\" mutant no-idle -- \"$1\"";
    Command::new(KIT)
        .args(["check", "--format", "json", "--filter", BROKEN, "--output"])
        .arg(&json)
        .args(["--", "sh", "-c", chatty, KIT, RUNTIME])
        .assert()
        .code(1);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == BROKEN);
    let wire = &check.expect("the failing check")["failure"]["wire_log"];
    let lines = wire["lines"].as_array().expect("the wire log's lines");
    assert!(lines.len() <= MAX_LINES, "{} lines kept", lines.len());
    let dropped = wire["dropped_lines"].as_u64().unwrap();
    assert!(dropped > 0, "{wire:#}");
    assert!(lines
        .iter()
        .all(|l| l["text"].as_str().unwrap().len() <= LINE_BYTES));
    let clipped = lines.iter().filter(|l| l["clipped"] == true).count();
    assert_eq!(clipped, 1, "the 5000-byte line is kept clipped: {wire:#}");
    assert!(
        lines
            .iter()
            .any(|l| l["dir"] == "received"
                && l["text"].as_str().unwrap().contains("session.status")),
        "the case's last frames are kept: {wire:#}"
    );
    Command::new(KIT)
        .args(["report", "--html"])
        .arg(&page)
        .arg(&json)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!(
            "truncated: the first {dropped} lines of the case are not kept"
        )),
        "the page marks the truncation"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
