//! What a launch profile gives the model (docs/CONTRACT.md#s13.6): its plugin rows (the rows a
//! patch can disable or add to), the tool roster, the system prompt, and the runtime-context
//! sections, for `sdk` and `sdk-minimal` as the 0.2.1rc2 release composes them.

use super::config::{Config, Profile};
use serde_json::{json, Value};

/// The `sdk-minimal` profile's rows (id, package), in the release's order: the whole tree of the
/// `@deepseek-ai/dsh-sdk-minimal` bundle (it does not layer over `dsh-base`).
pub const MINIMAL_ROWS: &[(&str, &str)] = &[
    ("sdk-app-startup", "@deepseek-ai/dsh-sdk-app"),
    ("sdk-jsonrpc-server", "@deepseek-ai/dsh-sdk-jsonrpc-server"),
    (
        "deepseek-llm-api-extensions",
        "@deepseek-ai/dsh-deepseek-llm-api-extensions",
    ),
    (
        "session-log-deepseek",
        "@deepseek-ai/dsh-session-log-deepseek",
    ),
    (
        "plugin-package-inventory-deepseek",
        "@deepseek-ai/dsh-plugin-package-inventory-deepseek",
    ),
    ("llm-deepseek", "@deepseek-ai/dsh-llm-deepseek-api-key"),
    ("sandbox", "@deepseek-ai/dsh-sandbox-local"),
    ("filesystem", "@deepseek-ai/dsh-fs-local"),
    ("attachment-local", "@deepseek-ai/dsh-attachment-local"),
    ("tool-fs", "@deepseek-ai/dsh-tool-fs"),
    ("working-directory", "@deepseek-ai/dsh-working-directory"),
    (
        "tool-working-directory",
        "@deepseek-ai/dsh-tool-working-directory",
    ),
    ("session-projection", "@deepseek-ai/dsh-session-projection"),
    ("token-meter", "@deepseek-ai/dsh-token-meter"),
    ("compaction-basic", "@deepseek-ai/dsh-compaction-basic"),
    ("image-offload", "@deepseek-ai/dsh-compaction-image-offload"),
    ("sandbox-policy", "@deepseek-ai/dsh-sandbox-policy"),
    ("subprocess", "@deepseek-ai/dsh-subprocess-local"),
    ("pty", "@deepseek-ai/dsh-terminal"),
    ("terminal-bash", "@deepseek-ai/dsh-terminal-bash"),
    ("timer", "@deepseek-ai/cordis-plugin-timer"),
    ("llm", "@deepseek-ai/dsh-llm"),
    ("session", "@deepseek-ai/dsh-session"),
    ("session-title", "@deepseek-ai/dsh-session-title"),
    ("system-prompt", "@deepseek-ai/dsh-system-prompt"),
    ("tools", "@deepseek-ai/dsh-tools"),
    ("mcp-resources", "@deepseek-ai/dsh-mcp-resources"),
    ("agent", "@deepseek-ai/dsh-agent"),
    ("llm-retry", "@deepseek-ai/dsh-llm-retry"),
    ("jobs", "@deepseek-ai/dsh-jobs-local"),
    ("agent-loop", "@deepseek-ai/dsh-agent-loop"),
    ("persistent-bash", "@deepseek-ai/dsh-tool-bash-persistent"),
    ("sessions", "@deepseek-ai/dsh-session-persistence-jsonl"),
];

/// The rows of the `sdk` profile the reference runtime models (the release's tree is `dsh-base`
/// plus the SDK app; only these rows change what the reference does or are named in its docs).
pub const SDK_ROWS: &[(&str, &str)] = &[
    ("sdk-app-startup", "@deepseek-ai/dsh-sdk-app"),
    ("sdk-jsonrpc-server", "@deepseek-ai/dsh-sdk-jsonrpc-server"),
    ("system-prompt", "@deepseek-ai/dsh-system-prompt"),
];

/// The bundles a profile's `package.json` lists (`dsh.profile.bundles`), per shipped profile.
pub const MINIMAL_BUNDLES: &[&str] = &["@deepseek-ai/dsh-sdk-minimal"];
/// The `sdk` profile's bundles.
pub const SDK_BUNDLES: &[&str] = &["@deepseek-ai/dsh-base", "@deepseek-ai/dsh-sdk-app"];

/// The `sdk-minimal` system prompt when `DSH_SYSTEM_PROMPT` is not set.
pub const MINIMAL_PERSONA: &str = "You are a helpful software engineer assistant.";

/// The rows a profile starts from.
pub fn rows(profile: Profile) -> &'static [(&'static str, &'static str)] {
    match profile {
        Profile::Sdk => SDK_ROWS,
        Profile::SdkMinimal => MINIMAL_ROWS,
    }
}

/// Whether `package` is one the release ships (an inserted row naming it activates).
pub fn shipped_package(package: &str) -> bool {
    include_str!("shipped-packages.txt")
        .lines()
        .any(|l| !l.starts_with('#') && l == package)
}

/// The tools the release's `sdk` profile offers, in the order its requests list them (recorded:
/// `divergence_tool_arguments`). The reference runs `bash`, `subagent` and `read_image` (see
/// `tool_args`) and the rest as [`super::files`] says (docs/CONTRACT.md#s13.4).
pub const SDK_TOOLS: [&str; 25] = [
    "bash",
    "create_goal",
    "edit",
    "exit_plan_mode",
    "get_goal",
    "glob",
    "grep",
    "interrupt_agent",
    "job_kill",
    "job_list",
    "job_output",
    "list_agents",
    "read",
    "read_image",
    "send_message",
    "skill",
    "subagent",
    "subagent_fork",
    "todo_write",
    "update_goal",
    "web_fetch",
    "web_search",
    "workflow",
    "working_directory",
    "write",
];

/// The tools a request offers, in the release's order (by name).
pub fn roster(cfg: &Config) -> Vec<&str> {
    match cfg.profile {
        Profile::Sdk => SDK_TOOLS.to_vec(),
        Profile::SdkMinimal => {
            let mut tools: Vec<&str> = [
                ("bash", "persistent-bash"),
                ("read_image", "tool-fs"),
                ("working_directory", "tool-working-directory"),
            ]
            .into_iter()
            .filter(|(_, row)| cfg.row_enabled(row))
            .map(|(tool, _)| tool)
            .chain(cfg.extra_tools.iter().map(String::as_str))
            .collect();
            tools.sort_unstable();
            tools.dedup();
            tools
        }
    }
}

/// The system message's content blocks for a session's first step (`None`: no system message).
pub fn system_content(cfg: &Config) -> Option<Value> {
    if !cfg.row_enabled("system-prompt") {
        return None;
    }
    let text = match cfg.profile {
        Profile::Sdk => super::events::SYSTEM_PROMPT.to_owned(),
        Profile::SdkMinimal => cfg
            .env
            .system_prompt
            .clone()
            .unwrap_or_else(|| MINIMAL_PERSONA.to_owned()),
    };
    // An empty persona leaves the message without content blocks (as the release does).
    Some(if text.is_empty() {
        json!([])
    } else {
        json!([{"type":"text","text": text}])
    })
}

/// Whether new sessions announce `permission/preset`, `sandbox/mode` and `approval/policy`
/// (`sdk-minimal` has no permission or approval rows and runs unconfined: none of them).
pub fn announces_policies(profile: Profile) -> bool {
    profile == Profile::Sdk
}

/// The runtime-context snapshot of an `sdk-minimal` session: the working directory only.
pub fn minimal_runtime_context(cwd: &str) -> Value {
    let wd = format!(
        "Current working directory: {}.",
        super::events::js_quote(cwd)
    );
    let text = format!(
        "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n{wd}"
    );
    super::events::user_message(
        json!([{"type":"text","text": text}]),
        json!({"kind":"runtime-context","form":"snapshot","sections":[{"name":"working-directory:current","text": wd}]}),
        super::events::new_id(),
    )
}

const BASH_DESCRIPTION: &str = "Run commands in a bash shell\n* When invoking this tool, the contents of the \"command\" parameter does NOT need to be XML-escaped.\n* Network access depends on the task environment. Prefer configured mirrors/proxies when they are available.\n* State is persistent across command calls and discussions with the user.\n* To inspect a particular line range of a file, e.g. lines 10-25, try 'sed -n 10,25p /path/to/the/file'.\n* Please avoid commands that may produce a very large amount of output.\n* Please run long lived commands in the background, e.g. 'sleep 10 &' or start a server in the background.";

/// The `sdk-minimal` tool schemas as `request/header` lists them (verbatim from the release).
pub fn minimal_tool_schemas(roster: &[&str]) -> Value {
    let schema = |name: &str| match name {
        "bash" => json!({"name":"bash","description": BASH_DESCRIPTION,
            "parameters":{"type":"object","properties":{"command":{"type":"string","description":"The bash command to run. Relative path is preferred in the command."}},"required":["command"]}}),
        "read_image" => {
            json!({"name":"read_image","description":"Read a PNG/JPEG/WebP/GIF file and return the image itself. Large images are downscaled automatically; do not install image libraries or create thumbnails to inspect an image.",
            "parameters":{"type":"object","properties":{"file_path":{"type":"string","description":"Path to the image file, resolved by the filesystem backend."}},"required":["file_path"]}})
        }
        "working_directory" => {
            json!({"name":"working_directory","description":"Read the current working directory, or change it with cd. Relative paths use the current directory. Existing shells and running processes keep their own directories.",
            "parameters":{"type":"object","properties":{"cd":{"type":"string","description":"Existing directory to enter. Omit to read the current directory."}}}})
        }
        other => super::editor::schema(other).unwrap_or_else(|| json!({"name": other})),
    };
    Value::Array(roster.iter().map(|t| schema(t)).collect())
}

/// The `read_image` tool's answer: the scripted model declares no image input, so the release
/// refuses before reading the file.
pub fn read_image_refusal(path: &str, model: &str) -> String {
    format!(
        "Error: cannot read {} as an image: model {} does not declare image input; switch to an image-capable model to read images",
        super::events::js_quote(path),
        super::events::js_quote(model)
    )
}

/// The image formats `read_image` reads, by extension (lower case, with the dot).
const IMAGE_EXTENSIONS: [&str; 5] = [".png", ".jpg", ".jpeg", ".webp", ".gif"];

/// The release's `read_image` answer (both profiles; its arguments already checked) when the
/// model declares no image input (recorded: the fuzzer's tool calls, issue 21): an empty path
/// and a path whose extension names no image format are refused first, whatever the file;
/// anything else (an image, an extension-less path, a missing file) gets the model's refusal.
pub fn read_image_answer(path: &str, model: &str) -> String {
    if path.is_empty() {
        return "Error: file_path must be a non-empty string".into();
    }
    let ext = extname(path);
    if !ext.is_empty() && !IMAGE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()) {
        return format!(
            "Error: cannot read {}: the {ext} extension does not declare a supported image format; read_image accepts PNG/JPEG/WebP/GIF files, including extension-less files in those formats",
            super::events::js_quote(path)
        );
    }
    read_image_refusal(path, model)
}

/// Node's `path.extname`: from the last `.` of the last component, unless that `.` starts it.
fn extname(path: &str) -> &str {
    let base = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    match base.rfind('.') {
        Some(i) if i > 0 && base[..i].chars().any(|c| c != '.') => &base[i..],
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_image_refuses_an_empty_path_and_other_extensions_before_the_model() {
        let m = "deepseek-v4-flash";
        assert_eq!(
            read_image_answer("", m),
            "Error: file_path must be a non-empty string"
        );
        assert_eq!(
            read_image_answer("d/b.txt", m),
            "Error: cannot read \"d/b.txt\": the .txt extension does not declare a supported image format; read_image accepts PNG/JPEG/WebP/GIF files, including extension-less files in those formats"
        );
        for p in ["a.png", "/etc/hostname", "x.PNG", ".hidden", "a.jpeg"] {
            assert_eq!(read_image_answer(p, m), read_image_refusal(p, m), "{p}");
        }
    }

    #[test]
    fn the_minimal_roster_follows_its_rows() {
        let mut cfg = Config::default();
        assert_eq!(roster(&cfg), SDK_TOOLS);
        cfg.profile = Profile::SdkMinimal;
        assert_eq!(roster(&cfg), ["bash", "read_image", "working_directory"]);
        cfg.disabled_rows.insert("tool-fs".into());
        assert_eq!(roster(&cfg), ["bash", "working_directory"]);
        assert_eq!(
            minimal_tool_schemas(&roster(&cfg))
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn the_minimal_system_prompt_is_the_persona_or_dsh_system_prompt() {
        let mut cfg = Config {
            profile: Profile::SdkMinimal,
            ..Config::default()
        };
        assert_eq!(system_content(&cfg).unwrap()[0]["text"], MINIMAL_PERSONA);
        cfg.env.system_prompt = Some(String::new());
        assert_eq!(system_content(&cfg).unwrap(), json!([]));
        cfg.env.system_prompt = Some("Be brief.".into());
        assert_eq!(system_content(&cfg).unwrap()[0]["text"], "Be brief.");
        cfg.profile = Profile::Sdk;
        assert_eq!(
            system_content(&cfg).unwrap()[0]["text"],
            super::super::events::SYSTEM_PROMPT
        );
    }
}
