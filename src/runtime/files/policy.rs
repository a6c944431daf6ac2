//! The `sdk` profile's file policy under `workspace-write` (`@deepseek-ai/dsh-fs-sandbox`, read
//! in the 0.2.1rc2 executable): reads go anywhere; a write or edit must land, canonically, under
//! the session's workspace, `/tmp` or the platform temp directory (`TMPDIR`), else it is denied
//! with the release's sandbox marker and escalation hint. The workspace is the directory the
//! session opened in (its header's `cwd`, `initialize`'s then: `SandboxPolicyService.resolve`),
//! not the one it is in now: a session moved into a subdirectory still writes beside it, and
//! one moved out of its workspace may not write where it is (both found by the tool-call
//! fuzzing). An escalation (`sandbox_permissions`) needs an approval answerer, which the SDK
//! app does not have.

use super::fs::{canonical, Fs};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The denial a fenced mutation answers (error code `FS_SANDBOX_DENIED`).
pub const DENIED: &str = "[sandbox: file access denied under workspace-write mode]\n[sandbox: escalation available \u{2014} retry this exact operation once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]";

/// The roots a mutation may land under, canonical: the session's `workspace`, `/tmp` and
/// `TMPDIR` (the release's `writableRoots`).
pub fn writable_roots(fs: &dyn Fs, workspace: &str) -> Vec<PathBuf> {
    let tmpdir = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into());
    let mut roots: Vec<PathBuf> = [workspace, "/tmp", tmpdir.as_str()]
        .iter()
        .map(|r| canonical(fs, r))
        .collect();
    roots.dedup();
    roots
}

/// Whether the canonical `target` may be written from a session whose workspace is `workspace`.
pub fn may_write(fs: &dyn Fs, workspace: &str, target: &Path) -> bool {
    writable_roots(fs, workspace)
        .iter()
        .any(|r| target.starts_with(r))
}

/// What an escalation request (`sandbox_permissions`, `justification`) comes to: `None` when
/// the call asks for none; else the error text, and the approval it asked for (`reason`), if
/// it got that far.
pub fn escalation(args: &Value) -> Option<(String, Option<String>)> {
    let mode = args.get("sandbox_permissions").and_then(Value::as_str);
    let why = args.get("justification").and_then(Value::as_str);
    let fail = |m: &str| Some((m.to_owned(), None));
    match (mode, why) {
        (None, None) => None,
        (Some(_), None) => fail("invalid escalation: sandbox_permissions requires a justification"),
        (None, Some(_)) => fail("invalid escalation: justification is only valid together with sandbox_permissions"),
        (Some(_), Some(j)) if j.trim().is_empty() => fail("invalid justification: expected a non-empty sentence"),
        // The call's own mode: no escalation, the call runs (recorded: `sdk_tool_edges`).
        (Some("workspace-write"), Some(_)) => None,
        (Some(m), Some(_)) if m != "danger-full-access" => fail(&format!(
            "sandbox escalation to \"{m}\" is not strictly wider than this call's current \"workspace-write\" mode"
        )),
        (Some(m), Some(j)) => Some((
            format!("sandbox escalation to \"{m}\" requires approval, but no approval channel is available"),
            Some(format!("escalate sandbox to {m}: {j}")),
        )),
    }
}

/// The `approval/asked` and `approval/decided` data of an escalation nobody can answer.
pub fn unanswered(tool: &str, call_id: &str, reason: &str) -> [(&'static str, Value); 2] {
    let id = super::super::events::new_id();
    [
        (
            "approval/asked",
            json!({"id": id,"toolName": tool,"callId": call_id,"reason": reason}),
        ),
        (
            "approval/decided",
            json!({"id": id,"outcome":"unavailable"}),
        ),
    ]
}
