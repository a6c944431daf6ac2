//! The argument schemas of the `sdk` profile's tools the reference runs (besides `bash`,
//! `subagent` and `read_image`: `tool_args`) (the types, `required`, `enum` and
//! `items` of the schemas the release announces; descriptions left out) and the release's
//! validator of a call's arguments against them (`@deepseek-ai/dsh-tools`' JSON-schema check,
//! read in the 0.2.1rc2 executable): an object lists each missing required property in
//! `required` order, then its present properties' problems in `properties` order, then each
//! undeclared property when `additionalProperties` is false; the call fails with
//! `Error: invalid arguments: <problems joined by "; ">` (docs/CONTRACT.md#s13.4).

use serde_json::{json, Value};

/// The escalation fields `write` and `edit` offer under `workspace-write`.
fn escalation() -> Value {
    json!({"sandbox_permissions":{"type":"string","enum":["workspace-write","danger-full-access"]},
        "justification":{"type":"string"}})
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type":"object","properties": props,"required": required})
}

fn with(mut props: Value, more: Value) -> Value {
    if let (Some(p), Value::Object(m)) = (props.as_object_mut(), more) {
        p.extend(m);
    }
    props
}

/// The parameter schema of file tool `tool`; `None` for another tool.
pub fn of(tool: &str) -> Option<Value> {
    let s = json!({"type":"string"});
    let n = json!({"type":"number"});
    Some(match tool {
        "read" => object(
            json!({"file_path": s,"offset":{"type":"number"},"limit":{"type":"number"}}),
            &["file_path"],
        ),
        "write" => object(
            with(json!({"file_path": s,"content": s}), escalation()),
            &["file_path", "content"],
        ),
        "edit" => object(
            with(
                json!({"file_path": s,"old_string": s,"new_string": s,"replace_all":{"type":"boolean"}}),
                escalation(),
            ),
            &["file_path", "old_string", "new_string"],
        ),
        "glob" => object(json!({"pattern": s,"path": s}), &["pattern"]),
        "grep" => object(json!({"pattern": s,"path": s,"include": s}), &["pattern"]),
        "todo_write" => {
            let item = json!({"type":"object","additionalProperties":false,
                "properties":{"content": s,"status":{"type":"string","enum":["pending","in_progress","completed"]}},
                "required":["content","status"]});
            object(json!({"todos":{"type":"array","items": item}}), &["todos"])
        }
        "working_directory" => object(json!({"cd": s}), &[]),
        "job_list" | "get_goal" => object(json!({}), &[]),
        "job_output" => object(
            json!({"job_id": s,"wait":{"type":"boolean"},"timeout_ms": n}),
            &["job_id"],
        ),
        "job_kill" => object(json!({"job_id": s,"reason": s}), &["job_id"]),
        "exit_plan_mode" => object(json!({"plan": s}), &["plan"]),
        "send_message" => object(
            json!({"agent_id": s,"message": s}),
            &["agent_id", "message"],
        ),
        "list_agents" => object(
            json!({"scope":{"type":"string","enum":["children","descendants"]}}),
            &[],
        ),
        "interrupt_agent" => object(json!({"agent_id": s}), &["agent_id"]),
        "skill" => object(json!({"name": s}), &["name"]),
        "web_fetch" => object(json!({"url": s}), &["url"]),
        "web_search" => object(json!({"queries":{"type":"array","items": s}}), &["queries"]),
        "update_goal" => object(
            json!({"goal_id": s,"revision": n,
                "action":{"type":"string","enum":["edit","pause","resume","complete","blocked"]},
                "objective": s,"max_goal_rounds": n,"blocked_reason": s}),
            &["goal_id", "revision", "action"],
        ),
        "create_goal" => object(json!({"objective": s,"max_goal_rounds": n}), &["objective"]),
        "subagent_fork" => object(
            json!({"cwd": s,"description": s,"prompt": s}),
            &["description", "prompt"],
        ),
        "workflow" => {
            let phase = object(
                json!({"title": s,"detail": s,"provider": s,"model": s}),
                &["title"],
            );
            let meta = object(
                json!({"name": s,"whenToUse": s,"phases":{"type":"array","items": phase}}),
                &["name", "description"],
            );
            object(
                json!({"script": s,"meta": meta,"args":{"type":"object"},"run_in_background":{"type":"boolean"}}),
                &["script", "meta"],
            )
        }
        _ => return None,
    })
}

fn shown(path: &str) -> &str {
    if path.is_empty() {
        "arguments"
    } else {
        path
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The problems of `value` against `schema` at `path` (`""`: the arguments), as the release
/// words them.
pub fn problems(schema: &Value, value: &Value, path: &str) -> Vec<String> {
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let bad = |what: &str| vec![format!("\"{}\" must be {what}", shown(path))];
    match ty {
        "object" => {
            let Some(obj) = value.as_object() else {
                return bad("an object");
            };
            let mut out: Vec<String> = req(schema)
                .filter(|k| obj.get(*k).is_none())
                .map(|k| format!("missing required property \"{}\"", child(path, k)))
                .collect();
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, sub) in props.into_iter().flatten() {
                if let Some(v) = obj.get(k) {
                    out.extend(problems(sub, v, &child(path, k)));
                }
            }
            if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                out.extend(
                    obj.keys()
                        .filter(|k| props.is_none_or(|p| !p.contains_key(*k)))
                        .map(|k| {
                            format!(
                                "\"{}\" is not a declared property (additionalProperties: false)",
                                child(path, k)
                            )
                        }),
                );
            }
            out
        }
        "array" => match (value.as_array(), schema.get("items")) {
            (None, _) => bad("an array"),
            (Some(a), Some(items)) => a
                .iter()
                .enumerate()
                .flat_map(|(i, v)| problems(items, v, &format!("{path}[{i}]")))
                .collect(),
            (Some(_), None) => Vec::new(),
        },
        "string" if !value.is_string() => bad("a string"),
        "number" if !value.is_number() => bad("a number"),
        "boolean" if !value.is_boolean() => bad("a boolean"),
        _ => match schema.get("enum").and_then(Value::as_array) {
            Some(allowed) if !allowed.contains(value) => bad(&format!(
                "one of {}",
                crate::wire::json::to_string(&Value::Array(allowed.clone()))
            )),
            _ => Vec::new(),
        },
    }
}

fn req(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// `tool`'s arguments checked: `Err` with the problems joined as the release joins them.
pub fn check(tool: &str, args: &Value) -> Result<(), String> {
    let Some(schema) = of(tool) else {
        return Ok(());
    };
    let p = problems(&schema, args, "");
    if p.is_empty() {
        Ok(())
    } else {
        Err(p.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from the release (`sdk_tool_*`).
    #[test]
    fn arguments_are_checked_as_the_release_checks_them() {
        let c = |t: &str, v: Value| check(t, &v).unwrap_err();
        assert_eq!(
            c("read", json!({})),
            "missing required property \"file_path\""
        );
        assert_eq!(
            c("read", json!({"file_path": 5})),
            "\"file_path\" must be a string"
        );
        assert_eq!(
            c("write", json!({"file_path":"x","content":1})),
            "\"content\" must be a string"
        );
        assert_eq!(
            c(
                "todo_write",
                json!({"todos":[{"content":"x","status":"done"}]})
            ),
            "\"todos[0].status\" must be one of [\"pending\",\"in_progress\",\"completed\"]"
        );
        assert_eq!(
            c("todo_write", json!({"todos":[{"content":"x"}]})),
            "missing required property \"todos[0].status\""
        );
        assert_eq!(
            c("todo_write", json!({"todos":"x"})),
            "\"todos\" must be an array"
        );
        assert_eq!(c("grep", json!([])), "\"arguments\" must be an object");
        assert!(check(
            "edit",
            &json!({"file_path":"a","old_string":"b","new_string":"c","replace_all":true})
        )
        .is_ok());
    }
}
