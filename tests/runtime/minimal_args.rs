//! What the tool-call fuzzing (`fuzz --profile`, docs/BLACKBOX.md) found the reference doing
//! otherwise than the 0.2.1rc2 release, probed on the release and fixed: `sdk-minimal` checks
//! every tool's arguments against its schema; `read_image` refuses an empty path and a
//! non-image extension first (both profiles); `workspace-write` lets a session write in the
//! workspace it opened in after it moved into a subdirectory; a directory change to whitespace
//! only is refused as the release refuses it.

use super::harness::{cfg, events, prompt, H};
use dsh_conformance::runtime::{Edition, Profile};
use serde_json::{json, Value};
use std::path::Path;

fn session_in(profile: Profile, dir: &Path) -> H {
    let mut c = cfg(Edition::Current);
    c.profile = profile;
    c.process_cwd = dir.to_path_buf();
    let mut h = H::with(c);
    h.send(json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd": dir,"provider":"deepseek-official","model":"deepseek-v4-flash"}}));
    h
}

/// The text of the one tool result a prompt's turn gives, and whether it is an error.
fn result_of(h: &mut H, id: u64, text: &str) -> (String, bool) {
    let mut f = h.send(prompt(id, "s", text));
    f.extend(h.settle());
    let results: Vec<Value> = events(&f, "s")
        .into_iter()
        .filter(|e| e["type"] == "tool/result")
        .collect();
    assert_eq!(results.len(), 1, "{text}: {f:?}");
    let m = &results[0]["data"]["message"];
    let text = m["content"][0]["text"].as_str().unwrap_or("").to_owned();
    (text, m["isError"] == true)
}

/// A directory outside `/tmp` (writable under `workspace-write` wherever the workspace is).
fn scratch(name: &str) -> std::path::PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dsh-fuzzcall-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("sub")).unwrap();
    d.canonicalize().unwrap()
}

#[test]
fn sdk_minimal_checks_each_tools_arguments_as_the_release_does() {
    let dir = scratch("args");
    let mut h = session_in(Profile::SdkMinimal, &dir);
    let err = |s: &str| (format!("Error: invalid arguments: {s}"), true);
    for (i, (call, want)) in [
        (r#"working_directory {"cd":5}"#, err(r#""cd" must be a string"#)),
        (r#"bash {"command":7}"#, err(r#""command" must be a string"#)),
        (r#"bash {"description":"d"}"#, err(r#"missing required property "command""#)),
        (r#"read_image {}"#, err(r#"missing required property "file_path""#)),
        (r#"read_image {"file_path":7}"#, err(r#""file_path" must be a string"#)),
        (r#"read_image {"file_path":""}"#, ("Error: file_path must be a non-empty string".into(), true)),
        (r#"read_image {"file_path":"b.txt"}"#, ("Error: cannot read \"b.txt\": the .txt extension does not declare a supported image format; read_image accepts PNG/JPEG/WebP/GIF files, including extension-less files in those formats".into(), true)),
        (r#"bash {"command":"echo ok"}"#, ("ok\n[Command finished with exit code 0]".into(), false)),
    ]
    .into_iter()
    .enumerate()
    {
        let (text, error) = result_of(&mut h, i as u64 + 1, &format!("call: {call}"));
        assert_eq!((text.trim_end().to_owned(), error), want, "{call}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_change_to_whitespace_only_is_refused_in_the_releases_words() {
    for profile in [Profile::Sdk, Profile::SdkMinimal] {
        let dir = scratch("blank");
        let mut h = session_in(profile, &dir);
        for (i, path) in ["\t", " ", "\u{3000}"].into_iter().enumerate() {
            let set = json!({"jsonrpc":"2.0","id": i,"method":"session/working-directory/set","params":{"sessionId":"s","path": path}});
            let f = h.send(set);
            let answer = f.iter().find(|v| v["id"] == i).expect("answered");
            assert_eq!(
                answer["error"]["message"], "file_path must be a non-empty string",
                "{path:?}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_session_moved_into_a_subdirectory_still_writes_in_its_workspace_but_not_beyond() {
    let dir = scratch("root");
    let mut h = session_in(Profile::Sdk, &dir);
    let cd = format!(
        "call: working_directory {{\"cd\":\"{}/sub\"}}",
        dir.display()
    );
    assert!(!result_of(&mut h, 1, &cd).1);
    let write = |h: &mut H, id: u64, path: &Path| {
        let call = json!({"file_path": path, "content": "x"});
        result_of(h, id, &format!("call: write {call}"))
    };
    let (text, error) = write(&mut h, 2, &dir.join("beside.txt"));
    assert!(!error && text.contains("Created file"), "{text}");
    assert!(dir.join("beside.txt").is_file());
    // Outside the workspace and outside `/tmp` and `TMPDIR`, which `workspace-write` also lets a
    // session write (a checkout under /tmp has its target dir there too).
    let home = std::env::var_os("HOME").map_or_else(|| "/var/tmp".into(), std::path::PathBuf::from);
    let outside = home.join(format!(".dsh-fuzzcall-out-{}.txt", std::process::id()));
    let (text, error) = write(&mut h, 3, &outside);
    assert!(error && text.contains("file access denied"), "{text}");
    let _ = std::fs::remove_file(&outside);
    let _ = std::fs::remove_dir_all(&dir);
}
