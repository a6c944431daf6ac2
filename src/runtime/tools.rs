//! The `sdk-minimal` tools as the reference runs them (docs/CONTRACT.md#s13.6): `bash` in the
//! session's persistent shell ([`super::shell`]: real, or emulated with `--shell emulated`; no
//! `job/*` events; an error result only for a blank command or a shell that cannot start), `working_directory` (read, or `cd` with the same events as
//! `session/working-directory/set`), and `read_image` (refused: the scripted model declares no
//! image input, as the release's model does not). Every call's arguments are first checked
//! against the tool's schema, as the `sdk` tools' are.

use super::editor::{self, Outcome};
use super::events::Events;
use super::Runtime;
use serde_json::Value;

impl Runtime {
    /// Runs one `sdk-minimal` tool call (`call_id`, in turn `turn`) of session `sid`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn minimal_tool(
        &mut self,
        sid: &str,
        tool: &str,
        input: &Value,
        (turn, call_id): (u32, &str),
        now: u64,
        out: &mut Vec<u8>,
    ) -> Outcome {
        let model = self.route.model.clone();
        if !super::profile::roster(&self.cfg).contains(&tool) {
            return unknown_tool(tool);
        }
        let Some(s) = self.sessions.get_mut(sid) else {
            return plain(String::new(), true);
        };
        if let Some(invalid) = invalid_arguments(tool, input) {
            return invalid;
        }
        let arg = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        match tool {
            "bash" => {
                let command = arg("command").unwrap_or_default();
                if command.trim().is_empty() {
                    return plain(BLANK_COMMAND.into(), true);
                }
                if s.shell.is_none() {
                    match super::shell::start(self.cfg.shell, &s.cwd, sid, &self.cancel) {
                        Ok(sh) => s.shell = Some(sh),
                        Err(e) => return plain(e, true),
                    }
                }
                let shell = s.shell.as_mut().expect("started above");
                let (text, exited) = shell.run(&command);
                if exited {
                    s.shell = None;
                }
                plain(text, false)
            }
            "read_image" => {
                let path = arg("file_path").unwrap_or_default();
                plain(super::profile::read_image_answer(&path, &model), true)
            }
            "present" => editor::present(input, &s.cwd, turn, call_id),
            "str_replace_editor" => editor::str_replace_editor(input),
            _ => {
                // `working_directory`: the roster holds no other tool.
                let Some(path) = arg("cd") else {
                    return plain(s.cwd.to_string(), false);
                };
                let target = if path.is_empty() {
                    Err(super::cd::missing(&path))
                } else {
                    super::cd::cd(&s.cwd, &path)
                };
                let target = match target {
                    Ok(t) => t,
                    Err(e) => return plain(format!("Error: {e}"), true),
                };
                if *target != *s.cwd {
                    let mut ev = Events::new(out, sid, now);
                    super::sessions::change_directory(s, &mut ev, &target);
                }
                plain(target, false)
            }
        }
    }
}

/// The release's answer to a call of a tool the request did not offer (recorded under both
/// profiles: an error result, and the turn goes on).
pub(super) fn unknown_tool(tool: &str) -> Outcome {
    Outcome {
        text: format!("Error: unknown tool \"{tool}\""),
        is_error: true,
        error: Some(serde_json::json!({"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"})),
        ..Outcome::default()
    }
}

/// The release's answer to a call whose arguments break the tool's schema (the one
/// `request/header` lists; found by the tool-call fuzzing: `bash`, `read_image` and
/// `working_directory` are checked as the `sdk` tools are), `None` when they do not.
fn invalid_arguments(tool: &str, input: &Value) -> Option<Outcome> {
    // The tools patch layers add (`present`, `str_replace_editor`) check their own.
    if !["bash", "read_image", "working_directory"].contains(&tool) {
        return None;
    }
    let schemas = super::profile::minimal_tool_schemas(&[tool]);
    let schema = schemas.get(0).map(|s| &s["parameters"])?;
    let problems = super::files::schema::problems(schema, input, "");
    (!problems.is_empty()).then(|| Outcome {
        error: Some(serde_json::json!({"name":"ToolArgsError","code":"INVALID_ARGS"})),
        ..plain(
            format!("Error: invalid arguments: {}", problems.join("; ")),
            true,
        )
    })
}

/// The release's answer to a bash call whose command is blank.
const BLANK_COMMAND: &str = "Error: command must be a non-empty string";

fn plain(text: String, is_error: bool) -> Outcome {
    Outcome {
        text,
        is_error,
        ..Outcome::default()
    }
}
