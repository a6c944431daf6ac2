//! The `sdk` profile's other tools, answered as the 0.2.1rc2 release answers them in a session
//! of the SDK app (recorded: `sdk_tool_others`): no background jobs (the runtime answers its
//! sessions' job tools through `runtime::jobs`; these are a session's with none; `send_message`
//! is `runtime::relay`'s), subagents,
//! skills or plan mode to act on (goals: `runtime::goals`), no approval answerer, and no network (`web_search` goes to the
//! DeepSeek endpoint and fails as the release fails offline; `web_fetch` refuses what is not
//! a public URL and fails to resolve the rest).

use super::{arg, Call, Outcome};
use serde_json::{json, Value};

/// The tools this module answers.
pub const TOOLS: &[&str] = &[
    "job_list",
    "job_output",
    "job_kill",
    "exit_plan_mode",
    "list_agents",
    "interrupt_agent",
    "skill",
    "web_fetch",
    "web_search",
];

const SEARCH_ENDPOINT: &str = "https://api.deepseek.com/anthropic/v1/messages";

/// Runs `tool` (its arguments already checked against the schema).
pub fn run(tool: &str, args: &Value, c: &Call<'_>) -> Outcome {
    match tool {
        "job_list" => Outcome::ok("(no background jobs)".into(), None),
        "job_output" | "job_kill" => {
            Outcome::plain(&format!("unknown job {}", arg(args, "job_id")))
        }
        "exit_plan_mode" => Outcome::plain("exit_plan_mode is only available in plan mode"),
        "list_agents" => agents(args, c),
        "interrupt_agent" => Outcome::ok(
            format!("interrupt requested for agent {}", arg(args, "agent_id")),
            None,
        ),
        "skill" => Outcome::plain(&format!(
            "skill \"{}\" is unknown or no longer available",
            arg(args, "name")
        )),
        "web_fetch" => fetch(arg(args, "url")),
        _ => search(args, c.model),
    }
}

/// `list_agents`: the session's subagents (all finished: the scripted model answers at once),
/// or `(no subagents)`.
fn agents(args: &Value, c: &Call<'_>) -> Outcome {
    if c.state.children.is_empty() {
        return Outcome::ok("(no subagents)".into(), None);
    }
    let deep = arg(args, "scope") == "descendants";
    let rows: Vec<String> = c
        .state
        .children
        .iter()
        .map(|(id, label)| match deep {
            true => format!("{id} [inactive] parent={} depth=1 \u{2014} {label}", c.sid),
            false => format!("{id} [inactive] \u{2014} {label}"),
        })
        .collect();
    Outcome::ok(rows.join("\n"), None)
}

/// `web_fetch` of `url`: an invalid URL, or one whose host is not public, is refused.
fn fetch(url: &str) -> Outcome {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    let Some(host) = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or("")) else {
        return Outcome::coded(
            &format!("invalid URL: {url}"),
            "WebError",
            "WEB_INVALID_URL",
        );
    };
    let host = host.rsplit_once('@').map_or(host, |h| h.1);
    let name = host.split(':').next().unwrap_or(host);
    let local = name == "localhost"
        || name.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| {
            ip.is_private() || ip.is_loopback() || ip.is_link_local() || ip.is_unspecified()
        });
    if local {
        let m = format!("URL hostname \"{name}\" resolves to a non-public IP address");
        return Outcome::coded(&m, "WebError", "WEB_BLOCKED_URL");
    }
    // Offline, as the release answers without a resolver (recorded: `sdk_tool_edges`).
    let m = format!("web fetch failed: Error: getaddrinfo ENOTFOUND {name}");
    Outcome::coded(&m, "WebError", "WEB_PROVIDER_ERROR")
}

/// `web_search`: the request to the DeepSeek search endpoint, failing offline.
fn search(args: &Value, model: &str) -> Outcome {
    let query = args["queries"]
        .get(0)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let body = json!({"model": model,"max_tokens":4096,
        "messages":[{"role":"user","content":[{"type":"text","text": format!("Perform a web search for the query: {query}")}]}],
        "tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}],"thinking":{"type":"disabled"}});
    let request = json!({"endpoint": SEARCH_ENDPOINT,"apiVersion":"2023-06-01","body": body});
    let text = format!("DeepSeek search request failed: TypeError: fetch failed\n\nThe web request used endpoint \"{SEARCH_ENDPOINT}\". Search endpoint configuration is separate from chat. If that endpoint is not intended, guide the user to Plugins > Built-in plugin settings > Web search, where they can change and save Messages API base URL. If that settings page is unavailable, the user can set web-search-deepseek.baseURL to a trusted DeepSeek endpoint. Only the user should choose or change the endpoint.");
    Outcome {
        events: vec![("web/deepseek-search-llm-request", request)],
        ..Outcome::coded(&text, "WebError", "WEB_PROVIDER_ERROR")
    }
}
