//! `read`: a line-numbered window of a UTF-8 text file (`offset` 1-based, `limit` at most 2000
//! lines, each line cut at 2000 characters, 50 KiB in all), in the release's envelope.

use super::fs::{canonical, display, Kind};
use super::{arg, Call, Outcome, Seen};
use serde_json::{json, Value};

const LIMIT: u64 = 2000;
const MAX_LINE: usize = 2000;
const MAX_BYTES: usize = 50 * 1024;

fn positive(args: &Value, key: &str, default: u64) -> Result<u64, Box<Outcome>> {
    match args.get(key).and_then(Value::as_f64) {
        None => Ok(default),
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n.is_finite() => Ok(n as u64),
        Some(_) => Err(Box::new(Outcome::plain(&format!(
            "{key} must be a positive integer"
        )))),
    }
}

/// The window: the numbered lines, the total, and whether the byte cap cut it.
fn window(text: &str, offset: u64, limit: u64) -> (Vec<(u64, String)>, u64, bool) {
    let (mut lines, mut total, mut bytes, mut capped) = (Vec::new(), 0u64, 0usize, false);
    let mut raw: Vec<&str> = text.split('\n').collect();
    if raw.last() == Some(&"") {
        raw.pop();
    }
    for l in raw {
        total += 1;
        if capped || total < offset || lines.len() as u64 >= limit {
            continue;
        }
        let l = l.strip_suffix('\r').unwrap_or(l);
        let l = match l.char_indices().nth(MAX_LINE) {
            Some((i, _)) => format!("{}... (line truncated to {MAX_LINE} chars)", &l[..i]),
            None => l.to_owned(),
        };
        let size = l.len() + usize::from(!lines.is_empty());
        if bytes + size > MAX_BYTES {
            capped = true;
            continue;
        }
        bytes += size;
        lines.push((total, l));
    }
    (lines, total, capped)
}

/// The release's envelope of a window.
pub fn format(
    path: &str,
    offset: u64,
    lines: &[(u64, String)],
    total: u64,
    capped: bool,
) -> String {
    let end = lines.last().map_or(offset.saturating_sub(1), |l| l.0);
    let footer = if capped {
        format!(
            "(Output capped. Showing lines {offset}-{end}. Use offset={} to continue.)",
            end + 1
        )
    } else if end < total {
        format!(
            "(Showing lines {offset}-{end} of {total}. Use offset={} to continue.)",
            end + 1
        )
    } else {
        format!("(End of file - total {total} lines)")
    };
    let body = if lines.is_empty() {
        footer
    } else {
        let numbered: Vec<String> = lines.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        format!("{}\n\n{footer}", numbered.join("\n"))
    };
    format!("<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n</content>")
}

/// Runs `read`.
pub fn run(args: &Value, c: &mut Call<'_>) -> Outcome {
    let written = arg(args, "file_path");
    if written.trim().is_empty() {
        return Outcome::plain("file_path must be a non-empty string");
    }
    let (offset, limit) = match (positive(args, "offset", 1), positive(args, "limit", LIMIT)) {
        (Ok(o), Ok(l)) => (o, l),
        (Err(e), _) | (_, Err(e)) => return *e,
    };
    if limit > LIMIT {
        return Outcome::plain(&format!("limit must be less than or equal to {LIMIT}"));
    }
    let shown = display(c.cwd, written);
    let target = canonical(c.fs, &shown);
    let version = match c.fs.kind(&target) {
        None => {
            c.state.seen.insert(target, Seen::Absent);
            return Outcome::fs(
                &format!("cannot read \"{shown}\": not found"),
                "FS_NOT_FOUND",
            );
        }
        Some(Kind::File(v)) => v,
        Some(_) => {
            let m = format!("cannot read \"{shown}\": not a regular file");
            return Outcome::fs(&m, "FS_NOT_REGULAR_FILE");
        }
    };
    let text = match c.fs.read(&target) {
        Ok(t) => t,
        Err(e) => return Outcome::fs(&format!("cannot read \"{shown}\": {e}"), "FS_IO"),
    };
    let (lines, total, capped) = window(&text, offset, limit);
    if !capped && offset > total && !(total == 0 && offset == 1) {
        let m = format!("offset {offset} is out of range for \"{shown}\" ({total} lines)");
        return Outcome::fs(&m, "FS_NOT_FOUND");
    }
    c.state.seen.insert(target.clone(), Seen::Present(version));
    let path = target.to_string_lossy();
    let mut meta = json!({"path": path,"offset": offset,
        "lines": lines.iter().map(|(n, t)| json!({"number": n,"text": t})).collect::<Vec<_>>(),
        "totalLines": total});
    if let Some(lang) = super::lang::of(&path) {
        meta["lang"] = json!(lang);
    }
    Outcome::ok(format(&path, offset, &lines, total, capped), Some(meta))
}
