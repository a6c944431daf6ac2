//! The inputs of generated tool calls: valid ones per tool (after the release's schemas, as
//! the reference's `runtime::files::schema` and `tool_args` hold them) and the invalid kinds.
//!
//! Whatever writes or walks a tree (`write`, `bash`, `glob`, `grep`, a `cd`) names the case's
//! directory absolutely (`{{cwd}}/…`): should the session's move into it fail (or a shrunk
//! sequence lose it), nothing lands in, or searches, the runtime's own directory. Only reads and
//! edits of the sequence's own file names use relative paths (harmless anywhere else).

use super::{Rng, Workspace, CWD_PLACEHOLDER};
use serde_json::{json, Map, Value};

/// What kind of input a call has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Valid per the tool's schema, inside the workspace.
    Valid,
    /// A required property left out.
    Missing,
    /// A property of the wrong type.
    WrongType,
    /// A path outside the workspace.
    Outside,
    /// A tool the profile does not offer.
    Unoffered,
}

/// A one-pixel PNG (base64), for `read_image`.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn pick<'a>(rng: &mut Rng, of: &[&'a str]) -> &'a str {
    of[rng.below(of.len() as u64) as usize]
}

/// A file the sequence wrote, or (when none yet, or sometimes) a fresh name.
fn some_file(rng: &mut Rng, ws: &Workspace) -> String {
    match ws.files.len() as u64 {
        0 => format!("missing_{}.txt", ws.case),
        n => ws.files[rng.below(n) as usize].clone(),
    }
}

/// `name` (relative to the workspace) as an absolute path in it.
fn abs(name: &str) -> String {
    format!("{CWD_PLACEHOLDER}/{name}")
}

/// One of the sequence's files ([`some_file`]), named relatively or absolutely.
fn either(rng: &mut Rng, ws: &Workspace) -> String {
    let name = some_file(rng, ws);
    match rng.below(2) {
        0 => name,
        _ => abs(&name),
    }
}

fn new_file(ws: &mut Workspace, ext: &str) -> String {
    let name = match ws.dirs.last() {
        Some(d) if ws.files.len() % 2 == 1 => format!("{d}/w{}_{}.{ext}", ws.case, ws.files.len()),
        _ => format!("w{}_{}.{ext}", ws.case, ws.files.len()),
    };
    ws.files.push(name.clone());
    name
}

/// A small, bounded, harmless command, run in the workspace.
fn command(rng: &mut Rng, ws: &mut Workspace) -> String {
    format!("cd {CWD_PLACEHOLDER} && {}", plain_command(rng, ws))
}

fn plain_command(rng: &mut Rng, ws: &mut Workspace) -> String {
    match rng.below(16) {
        0 => "echo hi".into(),
        1 => "ls".into(),
        2 => "pwd".into(),
        3 => format!("printf 'hi\\nthere\\n' > {}", new_file(ws, "txt")),
        4 => format!("cat {}", some_file(rng, ws)),
        5 => {
            let d = format!("d{}_{}", ws.case, ws.dirs.len());
            ws.dirs.push(d.clone());
            format!("mkdir -p {d} && ls")
        }
        6 => "echo err >&2; exit 3".into(),
        7 => "false".into(),
        8 => "export FUZZ_V=1; echo $FUZZ_V".into(),
        9 => "echo ${FUZZ_V:-unset}".into(),
        10 => "sleep 0.2; echo slept".into(),
        11 => format!("echo {PNG} | base64 -d > {}", new_file(ws, "png")),
        12 => "seq 1 40".into(),
        13 => "printf 'no newline'".into(),
        14 => format!("wc -c {}", some_file(rng, ws)),
        _ => "exit 2".into(),
    }
}

/// A valid input of `tool` (`None`: the fuzzer makes no valid call of it; see the module).
fn valid(tool: &str, rng: &mut Rng, ws: &mut Workspace) -> Option<Value> {
    let d = "fuzz";
    Some(match tool {
        "bash" => json!({"description": d, "command": command(rng, ws)}),
        "read" => match rng.below(3) {
            0 => json!({"file_path": either(rng, ws), "offset": 1, "limit": 1}),
            _ => json!({"file_path": either(rng, ws)}),
        },
        "write" => {
            json!({"file_path": abs(&new_file(ws, "txt")), "content": pick(rng, &["hi\n", "", "a\nb"])})
        }
        "edit" => json!({"file_path": either(rng, ws), "old_string": pick(rng, &["hi", "a", "zz"]),
            "new_string": "ho", "replace_all": rng.below(2) == 0}),
        "glob" => match rng.below(3) {
            0 => json!({"pattern": "*.txt", "path": abs("")}),
            1 => json!({"pattern": "**/*", "path": abs(".")}),
            _ => json!({"pattern": format!("w{}*", ws.case), "path": CWD_PLACEHOLDER}),
        },
        "grep" => match rng.below(3) {
            0 => json!({"pattern": "hi", "path": CWD_PLACEHOLDER}),
            1 => json!({"pattern": "^t", "include": "*.txt", "path": CWD_PLACEHOLDER}),
            _ => json!({"pattern": "b", "path": abs(&some_file(rng, ws))}),
        },
        "todo_write" => {
            let status = pick(rng, &["pending", "in_progress", "completed"]);
            match rng.below(3) {
                0 => json!({"todos": []}),
                _ => {
                    json!({"todos": [{"content": "a", "status": status}, {"content": "b", "status": "pending"}]})
                }
            }
        }
        "working_directory" => match (rng.below(3), ws.dirs.last()) {
            (0, Some(dir)) => json!({"cd": abs(dir)}),
            (1, _) => json!({"cd": CWD_PLACEHOLDER}),
            _ => json!({}),
        },
        "job_list" | "get_goal" => json!({}),
        "job_output" => json!({"job_id": "job-1", "wait": false}),
        "job_kill" => json!({"job_id": "job-1", "reason": d}),
        "exit_plan_mode" => json!({"plan": "p"}),
        "update_goal" => {
            let action = pick(rng, &["pause", "resume", "complete", "edit", "blocked"]);
            json!({"goal_id": "g1", "revision": 1, "action": action})
        }
        // A small round cap: a goal runs its rounds as turns of their own (256 by default).
        "create_goal" => json!({"objective": pick(rng, &["ship it", "  spaced  ", "say \"hi\""]),
            "max_goal_rounds": 1 + rng.below(2)}),
        "send_message" => json!({"agent_id": "a1", "message": "m"}),
        "list_agents" => json!({"scope": pick(rng, &["children", "descendants"])}),
        "interrupt_agent" => json!({"agent_id": "a1"}),
        "skill" => json!({"name": "nope"}),
        "web_fetch" => {
            json!({"url": pick(rng, &["http://127.0.0.1:9/x", "http://localhost/", "not a url"])})
        }
        "subagent" => json!({"description": d, "prompt": "reply: child"}),
        "read_image" => {
            let png = ws.files.iter().find(|f| f.ends_with(".png")).cloned();
            json!({"file_path": png.unwrap_or_else(|| some_file(rng, ws))})
        }
        "subagent_fork" => json!({"description": d, "prompt": "reply: forked"}),
        // `web_search` goes to the DeepSeek endpoint: off this machine. The reference does not
        // run valid calls of `workflow` (docs/CONTRACT.md §13.4; the release runs a workflow's
        // script): nothing to compare.
        _ => return None,
    })
}

/// The required properties of `tool`, in schema order.
fn required(tool: &str) -> Vec<String> {
    let listed = match tool {
        "bash" => vec!["description", "command"],
        "subagent" => vec!["description", "prompt"],
        "read_image" => vec!["file_path"],
        _ => Vec::new(),
    };
    if !listed.is_empty() {
        return listed.into_iter().map(str::to_owned).collect();
    }
    crate::runtime::files::schema::of(tool)
        .and_then(|s| s.get("required").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The valid input, or for a tool without one a minimal object holding its required
/// properties (as strings) to break.
fn base(tool: &str, rng: &mut Rng, ws: &mut Workspace) -> Map<String, Value> {
    let v = valid(tool, rng, ws).unwrap_or_else(|| match tool {
        "web_search" => json!({"queries": ["q"]}),
        _ => Value::Object(
            required(tool)
                .into_iter()
                .map(|k| (k, "x".into()))
                .collect(),
        ),
    });
    v.as_object().cloned().unwrap_or_default()
}

fn first_property(tool: &str) -> Option<String> {
    let schema = crate::runtime::files::schema::of(tool)?;
    schema["properties"].as_object()?.keys().next().cloned()
}

fn wrong(v: &Value) -> Value {
    match v {
        Value::String(_) => 7.into(),
        Value::Number(_) => "7".into(),
        Value::Bool(_) => "yes".into(),
        Value::Array(_) => json!({"a": 1}),
        Value::Object(_) => json!(["x"]),
        Value::Null => true.into(),
    }
}

/// A path outside the workspace for `tool` (`None`: it takes no path).
fn outside(tool: &str, case: u64) -> Option<Value> {
    let out = abs(&format!("../outside_{case}.txt"));
    Some(match tool {
        "bash" => json!({"description": "fuzz",
            "command": format!("cat /etc/hostname; echo x > {out}; cat {out}")}),
        "read" | "read_image" => json!({"file_path": "/etc/hostname"}),
        "write" => json!({"file_path": out, "content": "x"}),
        "edit" => json!({"file_path": out, "old_string": "x", "new_string": "y"}),
        "glob" => json!({"pattern": "host*", "path": "/etc"}),
        "grep" => json!({"pattern": "a", "path": "/etc/hostname"}),
        "working_directory" => json!({"cd": "/nonexistent/dsh-fuzz"}),
        _ => return None,
    })
}

/// An input of `kind` for `tool`, and the kind it really is (a tool with no input of that kind
/// gets another: no valid `web_search`, no path outside for a tool without paths, no required
/// property to leave out).
pub fn input(tool: &str, kind: Kind, rng: &mut Rng, ws: &mut Workspace) -> (Kind, Value) {
    match kind {
        Kind::Valid => match valid(tool, rng, ws) {
            Some(v) => (Kind::Valid, v),
            None => input(tool, Kind::Missing, rng, ws),
        },
        Kind::Missing => {
            let req = required(tool);
            if req.is_empty() {
                return input(tool, Kind::WrongType, rng, ws);
            }
            let mut m = base(tool, rng, ws);
            m.remove(&req[rng.below(req.len() as u64) as usize]);
            (Kind::Missing, Value::Object(m))
        }
        Kind::WrongType => {
            let mut m = base(tool, rng, ws);
            let keys: Vec<String> = m.keys().cloned().collect();
            match keys.len() as u64 {
                // A declared property of the wrong type (a tool without any, `job_list` or
                // `get_goal`, takes any object: an undeclared one is all there is to send).
                0 => m.insert(
                    first_property(tool).unwrap_or_else(|| "cd".into()),
                    5.into(),
                ),
                n => {
                    let k = &keys[rng.below(n) as usize];
                    let w = wrong(&m[k]);
                    m.insert(k.clone(), w)
                }
            };
            (Kind::WrongType, Value::Object(m))
        }
        Kind::Outside => match outside(tool, ws.case) {
            Some(v) => (Kind::Outside, v),
            None => input(tool, Kind::Valid, rng, ws),
        },
        Kind::Unoffered => (
            Kind::Unoffered,
            match rng.below(2) {
                0 => json!({}),
                _ => json!({"command": "echo hi", "file_path": "x.txt"}),
            },
        ),
    }
}
