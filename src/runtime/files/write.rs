//! `write`: creates or replaces a UTF-8 text file, creating its parent directories. Replacing
//! needs the file observed at its current version; the file policy fences where it may land.

use super::fs::{canonical, display, Kind};
use super::{arg, escalated, not_observed, policy, stale, Call, Outcome, Seen};
use serde_json::{json, Value};

/// The `meta.diffs` of a change from `before` to `after` at `path`: one entry per hunk of a
/// three-line-context line diff (the release's `structuredPatch`), `oldText` `null` when the
/// hunk removes no line.
pub fn diffs(path: &str, before: &str, after: &str) -> Vec<Value> {
    let diff = similar::TextDiff::from_lines(before, after);
    diff.grouped_ops(3)
        .iter()
        .map(|group| {
            let (mut old, mut new) = (Vec::new(), Vec::new());
            for op in group {
                for ch in diff.iter_changes(op) {
                    let text = ch
                        .value()
                        .strip_suffix('\n')
                        .unwrap_or(ch.value())
                        .to_owned();
                    match ch.tag() {
                        similar::ChangeTag::Delete => old.push(text),
                        similar::ChangeTag::Insert => new.push(text),
                        similar::ChangeTag::Equal => {
                            old.push(text.clone());
                            new.push(text);
                        }
                    }
                }
            }
            let old_text = (!old.is_empty()).then(|| old.join("\n"));
            json!({"path": path,"oldText": old_text,"newText": new.join("\n")})
        })
        .collect()
}

/// Runs `write`.
pub fn run(args: &Value, c: &mut Call<'_>) -> Outcome {
    let written = arg(args, "file_path");
    if written.trim().is_empty() {
        return Outcome::plain("file_path must be a non-empty string");
    }
    if let Some(o) = escalated("write", args, c) {
        return o;
    }
    let shown = display(c.cwd, written);
    let target = canonical(c.fs, &shown);
    let seen = c.state.seen.get(&target).copied();
    if !policy::may_write(c.fs, c.root, &target) {
        return Outcome::fs(policy::DENIED, "FS_SANDBOX_DENIED");
    }
    let existing = c.fs.kind(&target);
    let before = match (&existing, seen) {
        (Some(Kind::Dir | Kind::Other), _) => {
            let m = format!("cannot write \"{shown}\": not a regular file");
            return Outcome::fs(&m, "FS_NOT_REGULAR_FILE");
        }
        (None, Some(Seen::Present(_))) => {
            return stale(&format!("cannot write \"{shown}\": file no longer exists"))
        }
        (Some(Kind::File(v)), Some(Seen::Present(seen))) if *v != seen => {
            return stale(&format!(
                "cannot write \"{shown}\": file changed since it was read"
            ))
        }
        (Some(Kind::File(_)), Some(Seen::Present(_))) => c.fs.read(&target).ok(),
        (Some(Kind::File(_)), _) => return not_observed(&shown),
        (None, _) => None,
    };
    let content = arg(args, "content");
    if let Err(e) = c.fs.write(&target, content) {
        return Outcome::fs(&format!("cannot write \"{shown}\": {e}"), "FS_IO");
    }
    if let Some(Kind::File(v)) = c.fs.kind(&target) {
        c.state.seen.insert(target.clone(), Seen::Present(v));
    }
    let path = target.to_string_lossy();
    let (op, word) = if existing.is_some() {
        ("update", "Updated")
    } else {
        ("create", "Created")
    };
    let diffs = before.map_or_else(Vec::new, |b| {
        diffs(&path, &b, &content.replace("\r\n", "\n"))
    });
    let text =
        format!("<path>{path}</path>\n<type>file</type>\n<content>\n{word} file\n</content>");
    Outcome::ok(
        text,
        Some(json!({"operation": op,"path": path,"diffs": diffs})),
    )
}
