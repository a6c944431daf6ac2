//! `dsh-conformance check` against hostile runtimes, and the small edges of its command line.

use super::{kit, runtime, Run};
use crate::support::report::{listed, JsonReport};
use dsh_conformance::check::CheckId;
use std::time::Duration;

const MINUTES: Duration = Duration::from_secs(180);

fn json_report(run: &Run, path: &std::path::Path) -> JsonReport {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("no report ({e})\n{run}"));
    JsonReport::parse(&text)
}

/// The preflight's verdict on a runtime whose stdout holds no frame: the run stopped as unusable,
/// with one root cause, `stdout.frames-only`, quoting the runtime's first line.
fn assert_no_frame_on_stdout(rep: &JsonReport, first_line: &str) {
    assert_eq!(rep.stopped(), Some("unusable"), "{rep}");
    assert_eq!(rep.root_causes(), [CheckId::StdoutFramesOnly], "{rep}");
    let f = &rep.check(CheckId::StdoutFramesOnly)["failure"];
    assert_eq!(
        (&f["kind"], &f["closest"], &f["stdout_line"]),
        (&"not-a-frame".into(), &first_line.into(), &1.into()),
        "{rep}"
    );
}

fn report_path(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-report-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn a_runtime_that_floods_from_the_start_is_stopped_by_the_preflight() {
    let r = kit(
        &["check", "--format", "json", "--", &runtime("yes_a.sh")],
        None,
    );
    r.assert_clean(2, MINUTES);
    assert_no_frame_on_stdout(&JsonReport::parse(&r.stdout), "a");
}

#[test]
fn a_flood_after_initialize_is_one_root_cause_and_stops_the_run() {
    for jobs in ["1", "4"] {
        let r = kit(
            &[
                "check",
                "--format",
                "json",
                "--jobs",
                jobs,
                "--",
                &runtime("init_then.py"),
                "flood",
            ],
            None,
        );
        r.assert_clean(1, MINUTES);
        let rep = JsonReport::parse(&r.stdout);
        assert_eq!(rep.stopped(), Some("flooded"), "{rep}");
        let floods: Vec<&serde_json::Value> = rep
            .root_causes()
            .into_iter()
            .map(|id| &rep.check(id)["failure"])
            .filter(|f| f["kind"] == "flooded")
            .collect();
        assert_eq!(floods.len(), 1, "one flood, one root cause: {rep}");
        assert!(
            floods[0]["stderr_tail"]
                .as_str()
                .unwrap()
                .contains("hostile: initialized, now flood"),
            "the stderr tail: {rep}"
        );
    }
}

#[test]
fn a_runtime_that_goes_silent_gets_a_written_report_within_two_minutes() {
    let out = report_path("silent.json");
    let r = kit(
        &[
            "check",
            "--format",
            "json",
            "--output",
            out.to_str().unwrap(),
            "--",
            &runtime("init_then.py"),
            "silent",
        ],
        None,
    );
    r.assert_clean(1, Duration::from_secs(120));
    let rep = json_report(&r, &out);
    assert_eq!(rep.root_causes()[0], CheckId::ResponseAnswered, "{rep}");
    let failed = rep.check(CheckId::ResponseAnswered);
    assert!(
        failed["failure"]["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("now silent"),
        "the runtime's own words in the failure: {failed:#}"
    );
}

#[test]
fn a_runtime_that_dies_at_start_is_named_with_its_own_words_in_every_format() {
    let r = kit(&["check", "--", &runtime("fatal.sh")], None);
    r.assert_clean(2, MINUTES);
    assert!(
        r.stdout
            .contains("FATAL: config file /nonexistent/dsh.toml not found"),
        "{r}"
    );
    let out = report_path("fatal.json");
    let r = kit(
        &[
            "check",
            "--format",
            "json",
            "--output",
            out.to_str().unwrap(),
            "--",
            &runtime("fatal.sh"),
        ],
        None,
    );
    r.assert_clean(2, MINUTES);
    let rep = json_report(&r, &out);
    assert_eq!(rep.stopped(), Some("unusable"), "{rep}");
    assert!(rep.0["stopped"]["stderr_tail"]
        .as_str()
        .unwrap()
        .contains("FATAL"));
    let out = report_path("fatal.xml");
    let r = kit(
        &[
            "check",
            "--format",
            "junit",
            "--output",
            out.to_str().unwrap(),
            "--",
            &runtime("fatal.sh"),
        ],
        None,
    );
    r.assert_clean(2, MINUTES);
    let xml = std::fs::read_to_string(&out).unwrap();
    assert!(
        xml.contains("name=\"stopped\"") && xml.contains("FATAL"),
        "{xml}"
    );
    // The cause is an <error> a CI dashboard shows, not only a <property>.
    let error = xml.lines().find(|l| l.trim_start().starts_with("<error "));
    assert!(
        error.is_some_and(|e| e.contains("type=\"unusable\"")),
        "{xml}"
    );
}

#[test]
fn garbage_on_stdout_is_stopped_by_the_preflight_with_exit_2() {
    let r = kit(
        &["check", "--format", "json", "--", &runtime("garbage.sh")],
        None,
    );
    r.assert_clean(2, MINUTES);
    assert_no_frame_on_stdout(&JsonReport::parse(&r.stdout), "garbage: not json");
}

#[test]
fn a_setsid_grandchild_and_a_runtime_deaf_to_signals_are_killed_too() {
    for how in ["setsid", "deaf"] {
        let r = kit(
            &[
                "check",
                "--filter",
                "response.answered",
                "--timeout",
                "2",
                "--",
                &runtime("init_then.py"),
                how,
            ],
            None,
        );
        r.assert_clean(1, MINUTES);
    }
}

#[test]
fn sigint_and_sigterm_write_the_partial_report_and_leave_nothing() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let out = report_path("interrupted.json");
        let r = kit(
            &[
                "check",
                "--format",
                "json",
                "--output",
                out.to_str().unwrap(),
                "--jobs",
                "4",
                "--",
                &runtime("init_then.py"),
                "setsid",
            ],
            Some((Duration::from_secs(3), sig)),
        );
        r.assert_clean(code, MINUTES);
        let rep = json_report(&r, &out);
        assert_eq!(rep.stopped(), Some("signal"), "{rep}");
        assert_eq!(rep.0["stopped"]["signal"], sig);
        assert!(!rep.with("NOT RUN").is_empty(), "{rep}");
    }
}

#[test]
fn client_on_sigint_and_sigterm_writes_the_partial_report_and_leaves_nothing() {
    let kit_path = super::KIT;
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let out = report_path("client-interrupted.json");
        let r = kit(
            &[
                "client",
                "--format",
                "json",
                "--output",
                out.to_str().unwrap(),
                "--",
                kit_path,
                "client-driver",
            ],
            Some((Duration::from_secs(6), sig)),
        );
        r.assert_clean(code, MINUTES);
        assert!(r.stderr.contains("stopped: interrupted by"), "{r}");
        let rep = json_report(&r, &out);
        assert_eq!(rep.stopped(), Some("signal"), "{rep}");
        assert_eq!(rep.0["stopped"]["signal"], sig);
        // The reference client: what was judged before the signal passed, the rest was not run.
        assert!(!rep.with("PASS").is_empty(), "{rep}");
        assert!(!rep.with("NOT RUN").is_empty(), "{rep}");
        let judged = rep.with("PASS").len() + rep.with("NOT RUN").len();
        assert_eq!(judged, rep.verdicts().len(), "{rep}");
    }
}

#[test]
fn the_run_budget_is_printed_and_honoured() {
    let out = report_path("budget.json");
    let r = kit(
        &[
            "check",
            "--budget",
            "4",
            "--format",
            "json",
            "--output",
            out.to_str().unwrap(),
            "--",
            &runtime("init_then.py"),
            "silent",
        ],
        None,
    );
    r.assert_clean(1, Duration::from_secs(60));
    assert!(r.stderr.contains("run budget 4 s"), "{r}");
    let rep = json_report(&r, &out);
    assert_eq!(rep.stopped(), Some("budget"), "{rep}");
    assert_eq!(rep.0["stopped"]["budget_s"], 4, "{rep}");
}

#[test]
fn progress_reaches_a_non_terminal_stderr_once_per_check_unless_the_report_repeats_it() {
    let checks = dsh_conformance::suite::CHECKS
        .iter()
        .filter(|c| c.id.as_str().starts_with("frame."))
        .count();
    let progress = |r: &Run| r.stderr.lines().filter(|l| l.starts_with('[')).count();
    // The report on stdout lists every check: a CI log shows each once.
    let r = kit(&["check", "--filter", "frame.*"], None);
    r.assert_clean(0, MINUTES);
    assert_eq!(progress(&r), 0, "{r}");
    assert_eq!(
        r.stdout.lines().filter(|l| l.starts_with("PASS ")).count(),
        checks,
        "{r}"
    );
    // The report goes to a file: progress is all the log shows.
    let out = report_path("progress.txt");
    let r = kit(
        &[
            "check",
            "--filter",
            "frame.*",
            "--output",
            out.to_str().unwrap(),
        ],
        None,
    );
    r.assert_clean(0, MINUTES);
    assert_eq!(progress(&r), checks, "{r}");
    let r = kit(
        &["check", "--filter", "frame.*", "--progress", "always"],
        None,
    );
    r.assert_clean(0, MINUTES);
    assert_eq!(progress(&r), checks, "{r}");
}

/// The command line's edges: each is an exit 2 with a message that names the problem, found
/// before any runtime starts.
#[test]
fn bad_arguments_are_named_before_the_run() {
    let missing = "/nonexistent/known-failing.txt";
    for (args, says) in [
        (vec!["check", "--jobs", "0"], "--jobs"),
        (vec!["check", "--timeout", "-1"], "'--timeout <D>'"),
        (vec!["check", "--timeout", "1e20"], "is not a duration"),
        (vec!["check", "--budget", "-5"], "'--budget <D>'"),
        (vec!["check", "--known-failing", missing], missing),
        (
            vec!["check", "--output", "/nonexistent/dir/report.json"],
            "/nonexistent/dir/report.json",
        ),
    ] {
        let r = kit(&args, None);
        r.assert_clean(2, Duration::from_secs(10));
        assert!(r.stderr.contains(says), "{args:?}: {r}");
        assert!(!r.stderr.contains("[1/"), "{args:?} ran checks: {r}");
    }
}

#[test]
fn list_honours_filter_edition_and_format() {
    let ids = |args: &[&str]| -> Vec<CheckId> {
        let r = kit(
            &[&["check", "--list", "--format", "json"], args].concat(),
            None,
        );
        r.assert_clean(0, MINUTES);
        listed(&r.stdout).into_iter().map(|(id, _)| id).collect()
    };
    let lifecycle = ids(&["--filter", "lifecycle.*"]);
    assert!(
        !lifecycle.is_empty()
            && lifecycle
                .iter()
                .all(|i| i.as_str().starts_with("lifecycle.")),
        "{lifecycle:?}"
    );
    let legacy_only = dsh_conformance::suite::CHECKS
        .iter()
        .find(|c| {
            !c.editions
                .contains(dsh_conformance::edition::Edition::Current)
        })
        .expect("a check of another edition only");
    assert!(!ids(&[]).contains(&legacy_only.id));
    let other = dsh_conformance::edition::Edition::ALL
        .into_iter()
        .find(|e| legacy_only.editions.contains(*e))
        .unwrap();
    assert!(ids(&["--edition", other.name()]).contains(&legacy_only.id));
    let none = kit(&["check", "--list", "--filter", "no-such-check"], None);
    none.assert_clean(2, MINUTES);
}

#[test]
fn a_program_that_echoes_its_input_is_stopped_by_the_preflight() {
    let out = report_path("cat.json");
    let r = kit(
        &[
            "check",
            "--format",
            "json",
            "--output",
            out.to_str().unwrap(),
            "--",
            "/bin/cat",
        ],
        None,
    );
    // Once, at once: not every check waiting out its deadline on the echoed requests.
    r.assert_clean(2, Duration::from_secs(20));
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(rep["stopped"]["reason"], "unusable", "{rep:#}");
    assert_eq!(rep["summary"]["failed"], 0, "{rep:#}");
}
