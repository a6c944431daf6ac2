//! `edit`: replaces literal text in a file the session observed (once, or every occurrence
//! with `replace_all`), keeping its CRLF line endings; the file policy fences it as `write`.

use super::fs::{canonical, display, Kind};
use super::write::diffs;
use super::{arg, escalated, not_observed, policy, stale, Call, Outcome, Seen};
use serde_json::{json, Value};

fn parse(args: &Value) -> Option<Outcome> {
    if arg(args, "file_path").trim().is_empty() {
        return Some(Outcome::plain("file_path must be a non-empty string"));
    }
    if arg(args, "old_string").is_empty() {
        return Some(Outcome::plain("old_string must be a non-empty string"));
    }
    if arg(args, "old_string") == arg(args, "new_string") {
        return Some(Outcome::plain("old_string and new_string must differ"));
    }
    None
}

/// `text` with `old` replaced as the release replaces it, or the failure.
fn replaced(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
    shown: &str,
) -> Result<String, Box<Outcome>> {
    match text.matches(old).count() {
        0 => Err(Box::new(Outcome::fs(&format!("old_string was not found in \"{shown}\""), "FS_EDIT_NOT_FOUND"))),
        n if n > 1 && !all => Err(Box::new(Outcome::fs(
            &format!("old_string matched {n} times in \"{shown}\"; provide a more specific old_string or set replace_all to true"),
            "FS_AMBIGUOUS_EDIT",
        ))),
        _ if all => Ok(text.replace(old, new)),
        _ => Ok(text.replacen(old, new, 1)),
    }
}

/// Runs `edit`.
pub fn run(args: &Value, c: &mut Call<'_>) -> Outcome {
    if let Some(o) = parse(args) {
        return o;
    }
    if let Some(o) = escalated("edit", args, c) {
        return o;
    }
    let shown = display(c.cwd, arg(args, "file_path"));
    let target = canonical(c.fs, &shown);
    let seen = match c.state.seen.get(&target) {
        None => return not_observed(&shown),
        Some(Seen::Absent) => {
            return Outcome::fs(
                &format!("cannot edit \"{shown}\": not found"),
                "FS_NOT_FOUND",
            )
        }
        Some(Seen::Present(v)) => *v,
    };
    if !policy::may_write(c.fs, c.root, &target) {
        return Outcome::fs(policy::DENIED, "FS_SANDBOX_DENIED");
    }
    let changed = format!("cannot edit \"{shown}\": file changed since it was read");
    match c.fs.kind(&target) {
        None => return stale(&changed),
        Some(Kind::File(v)) if v != seen => return stale(&changed),
        Some(Kind::File(_)) => {}
        Some(_) => {
            let m = format!("cannot edit \"{shown}\": not a regular file");
            return Outcome::fs(&m, "FS_NOT_REGULAR_FILE");
        }
    }
    let raw = c.fs.read(&target).unwrap_or_default();
    let crlf = raw.contains("\r\n");
    let before = raw.replace("\r\n", "\n");
    let all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (old, new) = (arg(args, "old_string"), arg(args, "new_string"));
    let after = match replaced(&before, old, new, all, &shown) {
        Ok(a) => a,
        Err(o) => return *o,
    };
    let on_disk = if crlf {
        after.replace('\n', "\r\n")
    } else {
        after.clone()
    };
    if let Err(e) = c.fs.write(&target, &on_disk) {
        return Outcome::fs(
            &format!("edit: write: cannot write \"{shown}\": {e}"),
            "FS_IO",
        );
    }
    if let Some(Kind::File(v)) = c.fs.kind(&target) {
        c.state.seen.insert(target.clone(), Seen::Present(v));
    }
    let path = target.to_string_lossy();
    let text = if all {
        format!("The file {path} has been updated. All occurrences were successfully replaced.")
    } else {
        format!("The file {path} has been updated successfully.")
    };
    Outcome::ok(
        text,
        Some(json!({"path": path,"diffs": diffs(&path, &before, &after)})),
    )
}
