//! Tools a patch can add to `sdk-minimal` (docs/CONTRACT.md#s13.6): rows of the release's
//! `@deepseek-ai/dsh-tool-str-replace-editor` and `@deepseek-ai/dsh-tool-present` packages (as
//! the `dsh-openai` bridge's shipped overlay inserts them) offer `str_replace_editor` and
//! `present`. The reference edits real files, as the release does: the results below are the
//! release's texts where recorded, the editor's usual ones elsewhere.

use crate::wire::json::held;
use serde_json::{json, Value};
use std::path::Path;

/// The package whose row offers each tool.
pub const TOOL_PACKAGES: &[(&str, &str)] = &[
    ("@deepseek-ai/dsh-tool-present", "present"),
    (
        "@deepseek-ai/dsh-tool-str-replace-editor",
        "str_replace_editor",
    ),
];

/// A tool's `request/header` schema (the release's, verbatim).
pub fn schema(tool: &str) -> Option<Value> {
    let text = match tool {
        "present" => include_str!("schemas/present.json"),
        "str_replace_editor" => include_str!("schemas/str_replace_editor.json"),
        _ => return None,
    };
    serde_json::from_str(text).ok()
}

/// What a tool call produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The result text.
    pub text: String,
    /// Whether the result is an error.
    pub is_error: bool,
    /// The `error` member the release adds beside an error result's message (`{name, code}`).
    pub error: Option<Value>,
    /// `deliverables/presented` data (`present`).
    pub presented: Option<Value>,
}

fn fail(text: String) -> Outcome {
    Outcome {
        text: format!("Error: {text}"),
        is_error: true,
        ..Outcome::default()
    }
}

fn ok(text: String) -> Outcome {
    Outcome {
        text,
        ..Outcome::default()
    }
}

/// `present {files:[{path, description}]}`: each path (relative to `cwd`) must be an existing
/// regular file; the presented list carries absolute paths.
pub fn present(input: &Value, cwd: &str, turn: u32, call_id: &str) -> Outcome {
    let mut files = Vec::new();
    for f in input["files"].as_array().into_iter().flatten() {
        let path = f["path"].as_str().unwrap_or("");
        let abs = super::cd::resolve(cwd, path);
        if !super::cd::fs_path(&abs).is_file() {
            let mut o = fail(format!(
                "Cannot present {path}: file not found. Check the path, create the file if needed, and retry."
            ));
            o.error = Some(json!({"name":"FsError","code":"FS_NOT_FOUND"}));
            return o;
        }
        let mut entry = json!({"path": abs});
        if let Some(d) = f.get("description").filter(|d| d.is_string()) {
            entry["description"] = d.clone();
        }
        files.push(entry);
    }
    let names: Vec<&str> = files.iter().filter_map(|f| f["path"].as_str()).collect();
    let mut o = ok(format!("Presented {}", names.join(", ")));
    o.presented = Some(json!({"turn": turn, "callId": call_id, "files": files}));
    o
}

/// `str_replace_editor {command, path, …}` on the real file system.
pub fn str_replace_editor(input: &Value) -> Outcome {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let path = s("path").unwrap_or("");
    if !path.starts_with('/') {
        return fail(format!(
            "The path {path} is not an absolute path, it should start with `/`. Maybe you meant /{path}?"
        ));
    }
    let p = &super::cd::fs_path(path);
    match s("command").unwrap_or("") {
        "create" => {
            if p.exists() {
                return fail(format!(
                    "File already exists at: {path}. Cannot overwrite files using command `create`."
                ));
            }
            let Some(text) = s("file_text") else {
                return fail("Parameter `file_text` is required for command: create".into());
            };
            match std::fs::write(p, held::to_utf8_lossy(text).as_bytes()) {
                Ok(()) => ok(format!("New file created successfully at: {path}")),
                Err(e) => fail(format!("cannot write {path}: {e}")),
            }
        }
        command => {
            let Ok(content) = std::fs::read_to_string(p) else {
                return fail(format!(
                    "The path {path} does not exist. Please provide a valid path."
                ));
            };
            let content = held::hold(&content);
            match command {
                "view" => {
                    let lines: Vec<&str> = content.split('\n').collect();
                    let mut text = format!(
                        "Here's the content of {path} with line numbers (which has a total of {} lines):\n",
                        lines.len()
                    );
                    for (i, l) in lines.iter().enumerate() {
                        text.push_str(&format!("{:>6}  {l}\n", i + 1));
                    }
                    ok(text)
                }
                "str_replace" => {
                    let old = s("old_str").unwrap_or("");
                    match content.matches(old).count() {
                        1 if !old.is_empty() => {
                            let new = content.replacen(old, s("new_str").unwrap_or(""), 1);
                            write(p, path, &new)
                        }
                        0 => fail(format!("No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")),
                        _ => fail(format!("No replacement was performed. Multiple occurrences of old_str `{old}`. Please ensure it is unique")),
                    }
                }
                "insert" => {
                    let at = input["insert_line"].as_u64().unwrap_or(0) as usize;
                    let mut lines: Vec<&str> = content.split('\n').collect();
                    if at > lines.len() {
                        return fail(format!("Invalid `insert_line` parameter: {at}. It should be within the range of lines of the file: [0, {}]", lines.len()));
                    }
                    let new = s("new_str").unwrap_or("");
                    lines.insert(at, new);
                    write(p, path, &lines.join("\n"))
                }
                other => fail(format!("Unrecognized command {other}. The allowed commands for the str_replace_editor tool are: `view`, `create`, `str_replace`, `insert`")),
            }
        }
    }
}

fn write(p: &Path, path: &str, text: &str) -> Outcome {
    match std::fs::write(p, held::to_utf8_lossy(text).as_bytes()) {
        Ok(()) => ok(format!("The file {path} has been edited successfully.")),
        Err(e) => fail(format!("cannot write {path}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_parse_and_paths_must_be_absolute() {
        assert_eq!(schema("present").unwrap()["name"], "present");
        assert_eq!(
            schema("str_replace_editor").unwrap()["name"],
            "str_replace_editor"
        );
        let o = str_replace_editor(&json!({"command":"view","path":"notes.md"}));
        assert_eq!(o.text, "Error: The path notes.md is not an absolute path, it should start with `/`. Maybe you meant /notes.md?");
        let o = present(
            &json!({"files":[{"path":"nope.md"}]}),
            "/nonexistent-dir",
            1,
            "c",
        );
        assert_eq!(
            o.error,
            Some(json!({"name":"FsError","code":"FS_NOT_FOUND"}))
        );
    }
}
