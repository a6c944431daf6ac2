//! Launch options like the release (issue 11 items 1–3): `--profile sdk-minimal` (roster, shell,
//! system prompt), `--patch` overlays and the DSH_HOME patch layers, user profiles,
//! `DSH_SYSTEM_PROMPT`, stderr diagnostics and `--realistic-timing`.
//!
//! The real runtime's transcripts of these launches (`fixtures/real-0.2.1rc2/raw/` files whose
//! first line is `{"meta":{argv, env, files, home_files}}`) are replayed by the fidelity test
//! through [`launch_of`]; their exit codes and stderr are compared here.

use super::harness::{events, turn_end, types, H};
use dsh_conformance::runtime::launch::{self, Boot, Failure};
use dsh_conformance::runtime::shell::{ShellMode, RESET_NOTE};
use dsh_conformance::runtime::{Config, Edition, Profile};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_dsh-reference-runtime");

/// The `{"meta":…}` first line of a recording, when it has one.
fn meta_of(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let first: Value = serde_json::from_str(text.lines().next()?).ok()?;
    first.get("meta").cloned()
}

/// Lays out a recording's launch (its files in a cwd beside `home`, its home files in `home`)
/// and launches it as the reference does; returns the cwd used too.
fn lay_out(meta: &Value, home: &Path) -> (Result<launch::Launch, Failure>, PathBuf) {
    let cwd = home.with_extension("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(home).unwrap();
    let write_all = |base: &Path, files: &Value| {
        for (name, text) in files.as_object().into_iter().flatten() {
            let p = base.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text.as_str().unwrap_or("")).unwrap();
        }
    };
    write_all(&cwd, &meta["files"]);
    write_all(home, &meta["home_files"]);
    let mut vars: HashMap<String, String> = meta["env"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
        .collect();
    vars.insert("DSH_HOME".into(), home.to_string_lossy().into_owned());
    let argv: Vec<String> = meta["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a.as_str().unwrap_or("").to_owned())
        .collect();
    let args = launch::parse_args(&argv)
        .expect("recorded argv parses")
        .expect("not --help");
    (launch::launch(&args, &|k| vars.get(k).cloned(), &cwd), cwd)
}

/// For the fidelity test: the configuration to replay a recording into (the default launch with
/// DSH_HOME `home` in `fake_cwd`, or the one its `{"meta":…}` line describes, in a real
/// directory); `Err` when that launch serves nothing (it fails or exits at boot).
pub(super) fn launch_of(path: &Path, home: &Path, fake_cwd: &str) -> Result<Config, ()> {
    let Some(meta) = meta_of(path) else {
        // A real directory: a turn whose working directory does not exist fails.
        let _ = fake_cwd;
        let cwd = home.with_extension("cwd");
        std::fs::create_dir_all(&cwd).unwrap();
        let mut cfg = Config::new(Edition::Current);
        cfg.home = Some(home.to_path_buf());
        cfg.process_cwd = cwd;
        return Ok(cfg);
    };
    match lay_out(&meta, home).0 {
        Ok(l) if l.boot == Boot::Serve => Ok(l.cfg),
        _ => Err(()),
    }
}

/// The lines of a stderr text that carry the message: JavaScript stack frames, js-yaml's source
/// snippet (` 1 | …`, `-----^`), blank lines and the path of the startup log the release writes
/// (the reference writes none) are the release's alone.
fn message_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            let snippet = t.starts_with(|c: char| c.is_ascii_digit()) && t.contains(" | ");
            let noise = ["at ", "-----", "Full diagnostics: "];
            !t.is_empty() && !snippet && !noise.iter().any(|n| t.starts_with(n))
        })
        .collect()
}

#[test]
fn launch_exit_codes_and_stderr_match_the_real_runtime() {
    let raw = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-0.2.1rc2/raw");
    let tmp = std::env::temp_dir().join(format!("dsh-launch-{}", std::process::id()));
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&raw)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let Some(meta) = meta_of(&f) else { continue };
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        let exit: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        let recorded_stderr = exit["stderr"].as_str().unwrap_or("");
        let served = text.contains("\"dir\": \"out\"");
        let home = tmp.join(&name);
        let (launched, cwd) = lay_out(&meta, &home);
        let (code, stderr, serves) = match launched {
            Ok(l) => match l.boot {
                Boot::Serve => (0, l.stderr, true),
                Boot::Exit(code) => (code, l.stderr, false),
                // Never exits by itself: the recorder killed it (SIGKILL, recorded as -9).
                Boot::Hold => (-9, l.stderr, false),
            },
            Err(f) => (f.code, f.stderr, false),
        };
        let ours = stderr
            .replace(&*cwd.to_string_lossy(), "{{cwd}}")
            .replace(&*home.to_string_lossy(), "{{home}}");
        let want = (
            exit["exit"].as_i64().unwrap_or(-1) as i32,
            message_lines(recorded_stderr),
            served,
        );
        if (code, message_lines(&ours), serves) != want {
            failures.push(format!(
                "{name}: recorded exit {} serves {} stderr {:?}\n  ours exit {code} serves {serves} stderr {:?}",
                want.0,
                want.2,
                want.1,
                message_lines(&ours)
            ));
        }
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(checked >= 25, "launch recordings missing: {checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn minimal(system_prompt: Option<&str>) -> H {
    let mut c = super::harness::cfg(Edition::Current);
    c.profile = Profile::SdkMinimal;
    c.env.system_prompt = system_prompt.map(str::to_owned);
    H::with(c)
}

fn prompt_and_settle(h: &mut H, id: u64, text: &str) -> Vec<Value> {
    let mut f = h.send(super::harness::prompt(id, "s", text));
    f.extend(h.settle());
    f
}

/// The texts of the tool results in `frames`.
fn tool_results(frames: &[Value]) -> Vec<(String, bool)> {
    events(frames, "s")
        .iter()
        .filter(|e| e["type"] == "tool/result")
        .map(|e| {
            let m = &e["data"]["message"];
            (
                m["content"][0]["text"].as_str().unwrap_or("").to_owned(),
                m["isError"].as_bool().unwrap_or(true),
            )
        })
        .collect()
}

#[test]
fn sdk_minimal_offers_its_roster_and_announces_no_policies() {
    let mut h = minimal(None);
    h.init();
    let f = prompt_and_settle(&mut h, 1, "reply: hi");
    let t = types(&f, "s");
    assert!(
        !t.iter()
            .any(|t| t == "permission/preset" || t == "sandbox/mode" || t == "approval/policy"),
        "{t:?}"
    );
    let ev = events(&f, "s");
    let header = ev.iter().find(|e| e["type"] == "request/header").unwrap();
    let names: Vec<&str> = header["data"]["header"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bash", "read_image", "working_directory"]);
    let sys = ev.iter().find(|e| e["type"] == "system/message").unwrap();
    assert_eq!(
        sys["data"]["message"]["content"],
        json!([{"type":"text","text":"You are a helpful software engineer assistant."}])
    );
    let ctx = &ev
        .iter()
        .filter(|e| e["type"] == "user/message")
        .nth(1)
        .unwrap()["data"];
    assert_eq!(ctx["source"]["sections"].as_array().unwrap().len(), 1);
    // No subagent tool: the scripted model's call of it is refused like the stub's (HTTP 400).
    let f = prompt_and_settle(&mut h, 2, "subagent: hi");
    let end = turn_end(&f, "s");
    assert_eq!(end[0]["reason"]["error"]["status"], 400);
    assert!(end[0]["reason"]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("(offered: bash, read_image, working_directory)"));
}

/// An `sdk-minimal` runtime initialized in `dir` (a real directory), with `shell`.
fn minimal_in(dir: &Path, shell: ShellMode) -> H {
    let mut c = super::harness::cfg(Edition::Current);
    c.profile = Profile::SdkMinimal;
    c.process_cwd = dir.to_path_buf();
    c.shell = shell;
    let mut h = H::with(c);
    h.send(json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd": dir,"provider":"deepseek-official","model":"deepseek-v4-flash"}}));
    h
}

/// The tool results of `prompts`, one turn each.
fn run_prompts(h: &mut H, prompts: &[&str]) -> (Vec<(String, bool)>, Vec<Value>) {
    let mut all = Vec::new();
    for (i, p) in prompts.iter().enumerate() {
        all.extend(prompt_and_settle(h, i as u64 + 1, p));
    }
    (tool_results(&all), all)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dsh-minshell-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn sdk_minimal_bash_is_a_real_persistent_unconfined_shell() {
    let dir = scratch("real");
    let mut h = minimal_in(&dir, ShellMode::default());
    let (results, all) = run_prompts(
        &mut h,
        &[
            "tool: mkdir -p sub && echo made > sub/f.txt && ls sub | tr a-z A-Z",
            "tool: cd sub && export FOO=$(cat f.txt)",
            "tool: pwd; echo \"foo=$FOO\" >&2",
            "call: working_directory {\"cd\":\"sub\"}",
            "tool: cd /; pwd; echo out; exit 3",
            "tool: pwd; echo \"foo=$FOO\"",
            "call: bash {\"description\":\"d\",\"command\":\" \"}",
        ],
    );
    assert!(!types(&all, "s").iter().any(|t| t.starts_with("job/")));
    let d = dir.to_string_lossy();
    let ok = |t: &str| (t.to_string(), false);
    assert_eq!(results[0], ok("F.TXT\n[Command finished with exit code 0]"));
    assert_eq!(results[1], ok("[Command finished with exit code 0]"));
    assert_eq!(
        results[2],
        ok(&format!(
            "{d}/sub\nfoo=made\n[Command finished with exit code 0]"
        ))
    );
    assert_eq!(results[3], ok(&format!("{d}/sub")));
    assert_eq!(
        results[4],
        ok(&format!(
            "/\nout\nexit\n[shell exited: code 3]\n{RESET_NOTE}"
        ))
    );
    // A fresh shell starts in the session's (changed) working directory, with a fresh environment.
    assert_eq!(
        results[5],
        ok(&format!(
            "{d}/sub\nfoo=\n[Command finished with exit code 0]"
        ))
    );
    assert_eq!(
        results[6],
        ("Error: command must be a non-empty string".into(), true)
    );
    drop(h);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_command_past_its_bound_is_killed_and_the_shell_reset() {
    let dir = scratch("bound");
    let mut h = minimal_in(&dir, ShellMode::Real { timeout_ms: 1_000 });
    let (results, _) = run_prompts(
        &mut h,
        &[
            "tool: export X=1; echo before; sleep 600",
            "tool: echo \"x=$X\"",
        ],
    );
    assert_eq!(
        results[0].0,
        format!("Your command timed out after 1 seconds or experienced an OOM error. Below is partial output:\nbefore\n[Command timed out or OOM]\n{RESET_NOTE}")
    );
    assert_eq!(results[1].0, "x=\n[Command finished with exit code 0]");
    drop(h);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_emulated_shell_stays_an_opt_in() {
    let mut c = super::harness::cfg(Edition::Current);
    c.profile = Profile::SdkMinimal;
    c.shell = ShellMode::Emulated;
    let mut h = H::with(c);
    h.init();
    let (results, _) = run_prompts(
        &mut h,
        &[
            "tool: cd /tmp && export FOO=bar",
            "tool: pwd; echo \"foo=$FOO\"",
            "tool: echo out; exit 3",
            "tool: pwd",
            "tool: ls | wc",
        ],
    );
    assert_eq!(results[0].0, "[Command finished with exit code 0]");
    assert_eq!(
        results[1].0,
        "/tmp\nfoo=bar\n[Command finished with exit code 0]"
    );
    assert!(results[2]
        .0
        .starts_with("out\nexit\n[shell exited: code 3]\nThe persistent bash shell was reset"));
    assert_eq!(
        results[3].0,
        "/work-dir\n[Command finished with exit code 0]"
    );
    assert!(results[4].0.contains("`|` is not emulated"), "{results:?}");
}

#[test]
fn the_working_directory_and_read_image_tools_answer_like_the_release() {
    let mut h = minimal(None);
    h.init();
    let f = prompt_and_settle(&mut h, 1, "call: working_directory {\"cd\":\"/\"}");
    let t = types(&f, "s");
    assert!(t.contains(&"working-directory/change".to_string()), "{t:?}");
    assert_eq!(tool_results(&f), [("/".to_string(), false)]);
    let f = prompt_and_settle(&mut h, 2, "call: read_image {\"file_path\":\"a.png\"}");
    assert_eq!(tool_results(&f), [("Error: cannot read \"a.png\" as an image: model \"deepseek-v4-flash\" does not declare image input; switch to an image-capable model to read images".to_string(), true)]);
}

#[test]
fn dsh_system_prompt_replaces_the_minimal_system_message() {
    for (env, content) in [
        (
            Some("Be brief."),
            json!([{"type":"text","text":"Be brief."}]),
        ),
        (Some(""), json!([])),
    ] {
        let mut h = minimal(env);
        h.init();
        let f = prompt_and_settle(&mut h, 1, "reply: x");
        let sys = events(&f, "s")
            .into_iter()
            .find(|e| e["type"] == "system/message")
            .unwrap();
        assert_eq!(sys["data"]["message"]["content"], content);
    }
}

#[test]
fn realistic_timing_waits_the_retry_back_off() {
    let mut c = super::harness::cfg(Edition::Current);
    c.realistic_timing = true;
    let mut h = H::with(c);
    h.init();
    let t0 = h.now;
    let f = h.send(super::harness::prompt(1, "s", "error500"));
    assert_eq!(
        types(&f, "s").iter().filter(|t| *t == "llm/retry").count(),
        1
    );
    assert_eq!(h.rt.next_deadline(), Some(t0 + 500));
    let f = h.settle();
    assert_eq!(turn_end(&f, "s")[0]["reason"]["error"]["code"], "SERVER");
    // 500 + 1000 + 2000 + 4000 + 7500 ms of back-off, as the release's llm/retry delays say.
    assert_eq!(h.now - t0, 15_000);
}

fn run_bin(args: &[&str], home: &Path, input: &str) -> (i32, String, String, Duration) {
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .args(args)
        .env("DSH_HOME", home)
        .env_remove("DSH_SYSTEM_PROMPT")
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        start.elapsed(),
    )
}

#[test]
fn the_binary_fails_warns_and_boots_like_the_release() {
    let home = std::env::temp_dir().join(format!("dsh-minimal-bin-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"cwd\":\"/\",\"provider\":\"deepseek-official\",\"model\":\"deepseek-v4-flash\"}}\n";
    let (code, out, err, _) = run_bin(
        &["--profile", "sdk-minimal", "--patch", "missing.yml"],
        &home,
        init,
    );
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with("Error: dsh: failed to read overlay "),
        "{err}"
    );
    std::fs::write(
        home.join("o.yml"),
        "- insert:\n    - id: extra\n      name: '@acme/none'\n",
    )
    .unwrap();
    let (code, out, err, fast) = run_bin(
        &["--profile", "sdk-minimal", "--patch", "o.yml"],
        &home,
        init,
    );
    assert_eq!(code, 0);
    assert!(out.contains("serverInfo"));
    assert!(
        err.starts_with(
            "dsh: warning: 1 entry did not activate\nextra (@acme/none): failed to import: "
        ),
        "{err}"
    );
    let (code, out, _, slow) = run_bin(
        &["--profile", "sdk-minimal", "--realistic-timing"],
        &home,
        init,
    );
    assert_eq!(code, 0);
    assert!(out.contains("serverInfo"));
    assert!(slow >= Duration::from_millis(400), "{fast:?} {slow:?}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_disabled_json_rpc_server_exits_at_boot_under_minimal_and_holds_under_sdk() {
    let home = std::env::temp_dir().join(format!("dsh-minimal-hold-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("o.yml"),
        "- id: sdk-jsonrpc-server\n  disabled: true\n",
    )
    .unwrap();
    let init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n";
    let (code, out, err, _) = run_bin(
        &["--profile", "sdk-minimal", "--patch", "o.yml"],
        &home,
        init,
    );
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let mut child = Command::new(BIN)
        .args(["--profile", "sdk", "--patch", "o.yml"])
        .env("DSH_HOME", &home)
        .current_dir(&home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Stdin is at its end at once; the release keeps running regardless, answering nothing.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "exited without a signal"
    );
    // SAFETY: kill(2) on the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_call_of_a_tool_the_profile_does_not_offer_is_an_error_result_and_the_turn_goes_on() {
    for profile in [Profile::SdkMinimal, Profile::Sdk] {
        let mut c = super::harness::cfg(Edition::Current);
        c.profile = profile;
        c.shell = ShellMode::Emulated;
        let mut h = H::with(c);
        h.init();
        let f = prompt_and_settle(
            &mut h,
            1,
            "call!: nosuch_tool {\"description\":\"d\",\"prompt\":\"reply: hi\"}",
        );
        assert_eq!(
            tool_results(&f),
            [("Error: unknown tool \"nosuch_tool\"".to_string(), true)]
        );
        let result = events(&f, "s")
            .into_iter()
            .find(|e| e["type"] == "tool/result")
            .unwrap();
        assert_eq!(
            result["data"]["error"],
            json!({"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"})
        );
        assert_eq!(turn_end(&f, "s")[0]["reason"]["kind"], "completed");
    }
}

#[test]
fn the_end_of_stdin_cancels_a_running_command_instead_of_waiting_for_its_bound() {
    use std::io::{BufRead, BufReader, Write};
    let dir = scratch("eof");
    let mut child = Command::new(BIN)
        .args(["--profile", "sdk-minimal"])
        .env("DSH_HOME", dir.join("home"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd": dir,"provider":"deepseek-official","model":"deepseek-v4-flash"}});
    let ask = super::harness::prompt(2, "s", "tool: touch started; sleep 600");
    writeln!(stdin, "{init}\n{ask}").unwrap();
    // The reference writes the turn's events once the command ends: wait for the file it makes.
    while !dir.join("started").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "exited before the command ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let seen: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(Result::unwrap)
        .collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let results: Vec<Value> = seen
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["params"]["event"]["type"] == "tool/result")
        .collect();
    // Cancelled as the release's aborted commands answer (no text), not timed out.
    assert!(!results.is_empty(), "{seen:?}");
    for r in &results {
        assert_eq!(
            r["params"]["event"]["data"]["message"]["content"][0]["text"],
            ""
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
