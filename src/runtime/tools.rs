//! The `sdk-minimal` tools as the reference runs them (docs/CONTRACT.md#s13.6): `bash` in the
//! session's persistent emulated shell ([`super::shell`]: no `job/*` events, never an error
//! result), `working_directory` (read, or `cd` with the same events as
//! `session/working-directory/set`), and `read_image` (refused: the scripted model declares no
//! image input, as the release's model does not).

use super::editor::{self, Outcome};
use super::events::Events;
use super::shell::Shell;
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
        let Some(s) = self.sessions.get_mut(sid) else {
            return plain(String::new(), true);
        };
        let arg = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        match tool {
            "bash" => {
                let cwd = s.cwd.clone();
                let shell = s.shell.get_or_insert_with(|| Shell::new(&cwd));
                let (text, exited) = shell.run(&arg("command").unwrap_or_default());
                if exited {
                    s.shell = None;
                }
                plain(text, false)
            }
            "read_image" => plain(
                super::profile::read_image_refusal(&arg("file_path").unwrap_or_default(), &model),
                true,
            ),
            "present" => editor::present(input, &s.cwd, turn, call_id),
            "str_replace_editor" => editor::str_replace_editor(input),
            _ => {
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

fn plain(text: String, is_error: bool) -> Outcome {
    Outcome {
        text,
        is_error,
        ..Outcome::default()
    }
}
