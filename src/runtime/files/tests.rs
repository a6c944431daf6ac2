//! The file tools against a temporary directory, with the texts recorded from the release
//! (`fixtures/real-0.2.1rc2/raw/sdk_tool_*`).

use super::fs::Disk;
use super::*;
use serde_json::json;

fn dir(name: &str) -> String {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/files-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(d)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn call(cwd: &str, state: &mut State, tool: &str, args: Value) -> Outcome {
    let mut c = Call {
        cwd,
        root: cwd,
        state,
        call_id: "toolu_1",
        fs: &Disk,
        model: "m",
        sid: "s1",
    };
    run(tool, Some(&args), &mut c)
}

#[test]
fn write_read_edit_answer_as_the_release() {
    let cwd = dir("wre");
    let st = &mut State::default();
    let o = call(
        &cwd,
        st,
        "write",
        json!({"file_path":"a.txt","content":"one\ntwo\nthree\n"}),
    );
    assert_eq!(
        o.text,
        format!("<path>{cwd}/a.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>")
    );
    let o = call(
        &cwd,
        st,
        "read",
        json!({"file_path":"a.txt","offset":2,"limit":1}),
    );
    assert!(
        o.text.ends_with(
            "\n2: two\n\n(Showing lines 2-2 of 3. Use offset=3 to continue.)\n</content>"
        ),
        "{}",
        o.text
    );
    let o = call(&cwd, st, "read", json!({"file_path":"a.txt","offset":9}));
    assert_eq!(
        o.text,
        format!("Error: offset 9 is out of range for \"{cwd}/a.txt\" (3 lines)")
    );
    let o = call(
        &cwd,
        st,
        "edit",
        json!({"file_path":"a.txt","old_string":"two","new_string":"2"}),
    );
    assert_eq!(
        o.text,
        format!("The file {cwd}/a.txt has been updated successfully.")
    );
    assert_eq!(o.meta.unwrap()["diffs"][0]["newText"], "one\n2\nthree");
    let o = call(
        &cwd,
        st,
        "edit",
        json!({"file_path":"a.txt","old_string":"zz","new_string":"2"}),
    );
    assert_eq!(
        o.error,
        Some(json!({"name":"FsError","code":"FS_EDIT_NOT_FOUND"}))
    );
    // Not observed by this session: neither replaced nor edited.
    let other = &mut State::default();
    let o = call(
        &cwd,
        other,
        "write",
        json!({"file_path":"a.txt","content":"x"}),
    );
    assert_eq!(o.text, format!("Error: cannot modify \"{cwd}/a.txt\": file has not been read \u{2014} read the file, then retry"));
    assert_eq!(
        std::fs::read_to_string(format!("{cwd}/a.txt")).unwrap(),
        "one\n2\nthree\n"
    );
    let o = call(
        &cwd,
        st,
        "write",
        json!({"file_path":"a.txt","content":"x"}),
    );
    assert!(o.text.contains("Updated file"), "{}", o.text);
}

#[test]
fn writes_outside_the_workspace_and_temp_are_denied() {
    let cwd = dir("deny");
    let st = &mut State::default();
    let o = call(
        &cwd,
        st,
        "write",
        json!({"file_path":"/etc/dsh-probe","content":"x"}),
    );
    assert_eq!(o.text, format!("Error: {}", policy::DENIED));
    assert_eq!(
        o.error,
        Some(json!({"name":"FsError","code":"FS_SANDBOX_DENIED"}))
    );
    let o = call(
        &cwd,
        st,
        "write",
        json!({"file_path":"/etc/x","content":"x","sandbox_permissions":"danger-full-access","justification":"j"}),
    );
    assert_eq!(o.text, "Error: sandbox escalation to \"danger-full-access\" requires approval, but no approval channel is available");
    assert_eq!(o.events.len(), 2);
}

#[test]
fn glob_grep_and_todos_answer_as_the_release() {
    let cwd = dir("search");
    let st = &mut State::default();
    call(
        &cwd,
        st,
        "write",
        json!({"file_path":"src/main.rs","content":"fn main() {\n    hello();\n}\n"}),
    );
    call(
        &cwd,
        st,
        "write",
        json!({"file_path":"notes.txt","content":"hello world\nbye\n"}),
    );
    assert_eq!(
        call(&cwd, st, "glob", json!({"pattern":"**/*.rs"})).text,
        "src/main.rs"
    );
    assert_eq!(
        call(&cwd, st, "glob", json!({"pattern":"*.none"})).text,
        "No files found"
    );
    let o = call(&cwd, st, "grep", json!({"pattern":"hello"}));
    assert_eq!(
        o.text,
        "Found 2 matches\n\nnotes.txt\nLine 1: hello world\n\nsrc/main.rs\nLine 2:     hello();"
    );
    let o = call(&cwd, st, "grep", json!({"pattern":"("}));
    assert_eq!(o.text, "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (?:()\n    ^\nerror: unclosed group");
    let o = call(
        &cwd,
        st,
        "todo_write",
        json!({"todos":[{"content":"a","status":"in_progress"}]}),
    );
    assert_eq!(
        o.text,
        "Updated todo list: 0 pending, 1 in progress, 0 completed."
    );
    assert_eq!(o.events[0].0, "todo/write");
}

/// Recorded in `sdk_tool_others`.
#[test]
fn the_other_tools_answer_as_the_release_in_an_sdk_session() {
    let cwd = dir("others");
    let st = &mut State::default();
    assert_eq!(
        call(&cwd, st, "job_list", json!({})).text,
        "(no background jobs)"
    );
    assert_eq!(
        call(&cwd, st, "job_kill", json!({"job_id":"j"})).text,
        "Error: unknown job j"
    );
    // `send_message` with valid arguments is `runtime::relay`'s; with invalid ones, ours.
    assert!(!answers(
        "send_message",
        r#"{"agent_id":"a","message":"m"}"#
    ));
    assert!(answers("send_message", r#"{"agent_id":"a"}"#));
    let o = call(&cwd, st, "web_fetch", json!({"url":"http://127.0.0.1:9/"}));
    assert_eq!(
        o.text,
        "Error: URL hostname \"127.0.0.1\" resolves to a non-public IP address"
    );
    assert_eq!(
        call(&cwd, st, "web_fetch", json!({"url":"x"})).text,
        "Error: invalid URL: x"
    );
    let o = call(&cwd, st, "web_search", json!({"queries":["q"]}));
    assert_eq!(o.events[0].1["body"]["model"], "m");
    // The goal tools with valid arguments are `runtime::goals`'.
    assert!(!answers("get_goal", "{}"));
    assert_eq!(
        call(&cwd, st, "workflow", json!({})).text,
        "Error: invalid arguments: missing required property \"script\"; missing required property \"meta\""
    );
    assert!(!answers(
        "workflow",
        "{\"script\":\"x\",\"meta\":{\"name\":\"n\",\"description\":\"d\"}}"
    ));
    assert!(answers("workflow", "{}"));
}

/// Recorded in `sdk_tool_grep_ignores`: ignore files apply to grep, not to glob (outside a git
/// repository `.gitignore` is not read: `sdk_tool_listings`, replayed by the fidelity test; this
/// test's directory is inside the worktree's repository).
#[test]
fn grep_leaves_out_what_ripgrep_ignores() {
    let cwd = dir("ignores");
    let st = &mut State::default();
    for (p, t) in [
        (".git/HEAD", "ref: refs/heads/main\n"),
        (".gitignore", "# out\nignored.txt\nbuild/\n"),
        ("ignored.txt", "hello\n"),
        ("build/out.txt", "hello\n"),
        ("sub/.ignore", "skip.txt\n"),
        ("sub/skip.txt", "hello\n"),
        ("sub/kept.txt", "hello\n"),
    ] {
        call(&cwd, st, "write", json!({"file_path": p, "content": t}));
    }
    let o = call(&cwd, st, "grep", json!({"pattern":"hello"}));
    assert_eq!(o.text, "Found 1 match\n\nsub/kept.txt\nLine 1: hello");
    let o = call(&cwd, st, "grep", json!({"pattern":"hello","path":"build"}));
    assert_eq!(o.text, "Found 1 match\n\nbuild/out.txt\nLine 1: hello");
    let o = call(&cwd, st, "glob", json!({"pattern":"**/*.txt"}));
    assert_eq!(o.text.lines().count(), 4, "{}", o.text);
}
