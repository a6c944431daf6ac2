//! Runtime command lines are OS strings (issue 23): a Unix path or argument that is not UTF-8 is
//! passed to the runtime byte for byte, and the reports name it with each such byte as `\xNN`.

use super::{KIT, RUNTIME};
use crate::support::report::JsonReport;
use assert_cmd::Command;
use dsh_conformance::check::CheckId;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// A directory and a script in it, both with bytes that are not UTF-8 in their names (the
/// directory's: `prefix` and byte 0xFF). The script serves the reference runtime only when its
/// first argument is exactly `tag-` and byte 0xFE.
fn script() -> (String, PathBuf, PathBuf) {
    let prefix = std::env::temp_dir()
        .join(format!("dsh-os-args-{}-", uuid::Uuid::new_v4().simple()))
        .into_os_string()
        .into_string()
        .expect("a UTF-8 temp dir");
    let mut name = prefix.clone().into_bytes();
    name.push(0xff);
    let dir = PathBuf::from(OsString::from_vec(name));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join(OsString::from_vec(b"rt-\xfd.sh".to_vec()));
    let body = format!(
        "#!/bin/sh\n[ \"$1\" = \"$(printf 'tag-\\376')\" ] || {{ echo \"bad argument: $1\" >&2; exit 3; }}\nshift\nexec '{RUNTIME}' \"$@\"\n"
    );
    std::fs::write(&script, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (prefix, dir, script)
}

fn tag() -> OsString {
    OsString::from_vec(b"tag-\xfe".to_vec())
}

fn check(cwd: &std::path::Path, cmd: &[OsString], format: &str) -> String {
    let out = Command::new(KIT)
        .current_dir(cwd)
        .args([
            "check",
            "--filter",
            "stdout.frames-only",
            "--format",
            format,
            "--",
        ])
        .args(cmd)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).expect("the report is UTF-8")
}

#[test]
fn a_runtime_at_a_non_utf8_path_with_a_non_utf8_argument_is_checked_and_named() {
    let (prefix, dir, script) = script();
    // The label: the command line as typed, each byte that is not UTF-8 as \xNN.
    let expected = format!("{prefix}\\xff/rt-\\xfd.sh tag-\\xfe");
    let report = JsonReport::parse(&check(&dir, &[script.clone().into(), tag()], "json"));
    assert_eq!(report.0["runtime"], expected.as_str(), "{report}");
    assert_eq!(
        report.verdict(CheckId::parse("stdout.frames-only").unwrap()),
        "PASS",
        "{report}"
    );
    let human = check(&dir, &[script.into(), tag()], "human");
    assert!(human.contains(&expected), "{human}");
    // A relative script argument that is not UTF-8 is found in the kit's directory too.
    let rel = OsString::from_vec(b"rt-\xfd.sh".to_vec());
    let report = JsonReport::parse(&check(&dir, &["sh".into(), rel, tag()], "json"));
    assert_eq!(report.0["runtime"], "sh rt-\\xfd.sh tag-\\xfe", "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_takes_a_trace_at_a_non_utf8_path_and_a_runtime_behind_one() {
    let (prefix, dir, script) = script();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/errors/unknown-methods-answer-internal-error.trace");
    let trace = dir.join(OsString::from_vec(b"t-\xfc.trace".to_vec()));
    std::fs::copy(&fixture, &trace).unwrap();
    let out = Command::new(KIT)
        .arg("replay")
        .arg(&trace)
        .arg("--")
        .args([script.into_os_string(), tag()])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).expect("replay's output is UTF-8");
    assert!(out.contains("PASS"), "{out}");
    assert!(out.contains(&prefix), "the trace is named: {out}");
    let _ = std::fs::remove_dir_all(&dir);
}
