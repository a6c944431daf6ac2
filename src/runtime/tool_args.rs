//! The argument schemas of the `sdk` profile's tools the reference runs (`bash`, `subagent`,
//! `read_image`), and
//! the release's check of a call's arguments against them (probed against 0.2.1rc2 with
//! `call:` directives; docs/CONTRACT.md#s13.5).
//!
//! Every property listed is a required string. The release lists first each missing property, in
//! the schema's order (`missing required property "description"`), then each present one that is
//! not a string (`"command" must be a string`), then the problems of the optional properties
//! ([`optional`]), joined by `; `; other members are allowed. The call then
//! fails with `Error: invalid arguments: <problems>` and the tool result carries
//! `error: {name: ToolArgsError, code: INVALID_ARGS}`.

use serde_json::Value;

/// The required string properties of `tool`'s arguments, in schema order; `None` for a tool the
/// reference does not check.
pub(super) fn schema(tool: &str) -> Option<&'static [&'static str]> {
    match tool {
        "bash" => Some(&["description", "command"]),
        "subagent" => Some(&["description", "prompt"]),
        "read_image" => Some(&["file_path"]),
        _ => None,
    }
}

/// The optional properties of `tool`'s arguments, as a schema in the release's order: the `sdk`
/// bash's `timeoutMs`, `workdir`, `run_in_background` and escalation (read in the 0.2.1rc2
/// executable, `dsh-tool-bash`; recorded: `sandbox_bash_escalation`); a subagent's `cwd`
/// (recorded: `sdk_tool_subagent_cwd`).
fn optional(tool: &str) -> Option<Value> {
    match tool {
        "bash" => Some(serde_json::json!({"type":"object","properties":{
            "timeoutMs":{"type":"number"},"workdir":{"type":"string"},
            "run_in_background":{"type":"boolean"},
            "sandbox_permissions":{"type":"string","enum":["workspace-write","danger-full-access"]},
            "justification":{"type":"string"}}})),
        "subagent" => Some(serde_json::json!({"type":"object","properties":{
            "cwd":{"type":"string"}}})),
        _ => None,
    }
}

/// The problems of `args` (the parsed arguments; `None` when they are not JSON) against `tool`'s
/// schema, as the release words them; `Ok` when there are none.
pub(super) fn check(tool: &str, args: Option<&Value>) -> Result<(), String> {
    let Some(props) = schema(tool) else {
        return Ok(());
    };
    let obj = args.and_then(Value::as_object);
    let mut problems: Vec<String> = props
        .iter()
        .filter(|p| obj.is_none_or(|o| !o.contains_key(**p)))
        .map(|p| format!("missing required property \"{p}\""))
        .collect();
    if let Some(o) = obj {
        problems.extend(
            props
                .iter()
                .filter(|p| o.get(**p).is_some_and(|v| !v.is_string()))
                .map(|p| format!("\"{p}\" must be a string")),
        );
    }
    if let (Some(o), Some(more)) = (obj, optional(tool)) {
        problems.extend(super::files::schema::problems(
            &more,
            &Value::Object(o.clone()),
            "",
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The tool result of a subagent call made by a subagent: the release allows one level.
pub(super) const DEPTH_REFUSAL: &str = "Error: subagent depth 2 exceeds maxDepth 1";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Recorded from the release (see the module docs).
    #[test]
    fn arguments_are_checked_as_the_release_checks_them() {
        let c = |tool: &str, v: Value| check(tool, Some(&v));
        assert_eq!(
            c("bash", json!({})),
            Err(
                "missing required property \"description\"; missing required property \"command\""
                    .into()
            )
        );
        assert_eq!(
            c("bash", json!({"command": 5, "description": "d"})),
            Err("\"command\" must be a string".into())
        );
        assert_eq!(
            c("subagent", json!({"description": 5})),
            Err("missing required property \"prompt\"; \"description\" must be a string".into())
        );
        assert_eq!(
            c(
                "bash",
                json!({"command": "echo hi", "description": "d", "extra": 1})
            ),
            Ok(())
        );
        assert_eq!(c("read", json!({})), Ok(()));
        // A subagent's optional `cwd` (recorded: `sdk_tool_subagent_cwd`).
        let child = |cwd: Value| json!({"description": "d", "prompt": "p", "cwd": cwd});
        assert_eq!(
            c("subagent", child(json!(3))),
            Err("\"cwd\" must be a string".into())
        );
        assert_eq!(c("subagent", child(json!("sub"))), Ok(()));
    }
}
