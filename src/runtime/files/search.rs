//! `glob` and `grep` as the release runs them through ripgrep: `glob` lists the regular files
//! matching a gitignore-style glob (hidden and ignored files too, version-control directories
//! left out), oldest first; `grep` lists the lines matching a ripgrep (Rust `regex`) pattern,
//! grouped by file, hidden and ignored files left out ([`super::ignore`]). Paths are shown relative to the session's directory.
//!
//! Where ripgrep's order is its parallel walk's, the reference walks each directory's files
//! (oldest first) before its subdirectories (by name): the order the recordings show.
//!
//! Hand-written, not ripgrep's own crates: `ignore` walks the real disk in its own (parallel)
//! order, while the tools here run over the session's [`super::fs::Fs`] (in memory too) and
//! must list in the order the recordings show; the walk and the ignore rules are therefore the
//! reference's. The glob-to-regex translation is the one piece `globset` could replace: it is
//! kept because it is small and the same translation serves the ignore rules, and the
//! recordings (`sdk_tool_glob_grep`, `sdk_tool_grep_ignores`) pin what it must match.

use super::fs::{display, Found, Kind};
use super::{arg, Call, Outcome};
use regex::Regex;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const GLOB_MAX: usize = 100;

/// A gitignore-style glob as a regex over a `/`-separated path (a glob without `/` matches the
/// last component).
pub fn glob_regex(glob: &str) -> Option<Regex> {
    let (mut re, mut braces) = (String::from("^"), 0);
    let chars: Vec<char> = glob.trim_start_matches('/').chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                if chars.get(i + 2) == Some(&'/') {
                    re.push_str("(?:.*/)?");
                    i += 1;
                } else {
                    re.push_str(".*");
                }
                i += 1;
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '{' => {
                braces += 1;
                re.push_str("(?:");
            }
            '}' if braces > 0 => {
                braces -= 1;
                re.push(')');
            }
            ',' if braces > 0 => re.push('|'),
            '[' => {
                let end = chars[i..].iter().position(|&x| x == ']')? + i;
                let class: String = chars[i + 1..end].iter().collect();
                let class = class
                    .strip_prefix('!')
                    .map_or(class.clone(), |r| format!("^{r}"));
                re.push_str(&format!("[{}]", class.replace('\\', "\\\\")));
                i = end;
            }
            c => re.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    re.push('$');
    Regex::new(&re).ok()
}

fn matches(re: &Regex, glob: &str, rel: &str) -> bool {
    if glob.trim_start_matches('/').contains('/') {
        re.is_match(rel)
    } else {
        re.is_match(rel.rsplit('/').next().unwrap_or(rel))
    }
}

/// `p` as shown: relative to `cwd` when under it.
fn shown(cwd: &str, p: &Path) -> String {
    match p.strip_prefix(cwd) {
        Ok(r) => r.to_string_lossy().into_owned(),
        Err(_) => p.to_string_lossy().into_owned(),
    }
}

/// The search root of an optional `path` argument, and the files under it; a root that does
/// not exist fails as ripgrep's exit 2 (`tool` names the search).
fn files(c: &Call<'_>, path: &str, tool: &str) -> Result<(PathBuf, Vec<Found>), Box<Outcome>> {
    let root = PathBuf::from(if path.is_empty() {
        c.cwd.to_owned()
    } else {
        display(c.cwd, path)
    });
    let found = match c.fs.kind(&root) {
        Some(Kind::File(v)) => vec![Found {
            path: root.clone(),
            mtime: (v.1, 0),
        }],
        Some(_) => c.fs.walk(&root),
        None => {
            let m = format!("{tool} search failed (exit 2): rg: {path}: IO error for operation on {path}: No such file or directory (os error 2)");
            return Err(Box::new(Outcome::coded(&m, "SearchError", "SEARCH_FAILED")));
        }
    };
    Ok((root, found))
}

/// Runs `glob`.
pub fn glob(args: &Value, c: &mut Call<'_>) -> Outcome {
    let pattern = arg(args, "pattern");
    if pattern.trim().is_empty() {
        return Outcome::plain("pattern must be a non-empty string");
    }
    if args.get("path").is_some() && arg(args, "path").trim().is_empty() {
        return Outcome::plain("path must be a non-empty string when given");
    }
    let Some(re) = glob_regex(pattern) else {
        return Outcome::coded(
            "glob pattern rejected by ripgrep",
            "SearchError",
            "SEARCH_INVALID_PATTERN",
        );
    };
    let (root, mut found) = match files(c, arg(args, "path"), "glob") {
        Ok(f) => f,
        Err(o) => return *o,
    };
    found.retain(|f| {
        let rel = f
            .path
            .strip_prefix(&root)
            .unwrap_or(&f.path)
            .to_string_lossy()
            .into_owned();
        matches(&re, pattern, &rel)
    });
    found.sort_by_key(|f| f.mtime);
    let paths: Vec<String> = found.iter().map(|f| shown(c.cwd, &f.path)).collect();
    let total = paths.len();
    let text = if paths.is_empty() {
        "No files found".to_owned()
    } else if total <= GLOB_MAX {
        paths.join("\n")
    } else {
        let kept = paths[..GLOB_MAX].join("\n");
        format!("{kept}\n\n(Showing {GLOB_MAX} of {total} paths. The complete result could not be saved; narrow pattern or path to see more.)")
    };
    let kept: Vec<&String> = paths.iter().take(GLOB_MAX).collect();
    let meta = json!({"shape":"paths","paths": kept,"truncated": total > GLOB_MAX,"total": total});
    Outcome::ok(text, Some(meta))
}

/// Runs `grep`.
pub fn grep(args: &Value, c: &mut Call<'_>) -> Outcome {
    let pattern = arg(args, "pattern");
    if pattern.trim().is_empty() {
        return Outcome::plain("pattern must be a non-empty string");
    }
    let re = match Regex::new(&format!("(?:{pattern})")) {
        Ok(r) => r,
        Err(e) => {
            let m = format!("grep pattern rejected by ripgrep: rg: {e}");
            return Outcome::coded(m.trim_end(), "SearchError", "SEARCH_INVALID_PATTERN");
        }
    };
    let include = args.get("include").and_then(Value::as_str);
    let inc = include.and_then(glob_regex);
    let (root, found) = match files(c, arg(args, "path"), "grep") {
        Ok(f) => f,
        Err(o) => return *o,
    };
    let mut groups: Vec<(String, Vec<(usize, String)>)> = Vec::new();
    let paths: Vec<PathBuf> = found.iter().map(|f| f.path.clone()).collect();
    let ignores = super::ignore::Ignores::new(c.fs, &root, &paths);
    for f in found.iter().filter(|f| !ignores.ignored(&f.path)) {
        let rel = f
            .path
            .strip_prefix(&root)
            .unwrap_or(&f.path)
            .to_string_lossy()
            .into_owned();
        if let (Some(re), Some(g)) = (&inc, include) {
            if !matches(re, g, &rel) {
                continue;
            }
        }
        let Ok(text) = c.fs.read(&f.path) else {
            continue;
        };
        if text.contains('\0') {
            continue; // binary: ripgrep skips it
        }
        let hits: Vec<(usize, String)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| re.is_match(l))
            .map(|(i, l)| (i + 1, l.to_owned()))
            .collect();
        if !hits.is_empty() {
            groups.push((shown(c.cwd, &f.path), hits));
        }
    }
    let total: usize = groups.iter().map(|g| g.1.len()).sum();
    let meta_files: Vec<Value> = groups
        .iter()
        .map(|(p, hs)| json!({"path": p,"matches": hs.iter().map(|(n, l)| json!({"lineNumber": n,"line": l})).collect::<Vec<_>>()}))
        .collect();
    let meta = json!({"shape":"matches","files": meta_files,"truncated": false,"total": total});
    if total == 0 {
        return Outcome::ok("No matches found".into(), Some(meta));
    }
    let body: Vec<String> = groups
        .iter()
        .map(|(p, hs)| {
            let lines: Vec<String> = hs.iter().map(|(n, l)| format!("Line {n}: {l}")).collect();
            format!("{p}\n{}", lines.join("\n"))
        })
        .collect();
    let noun = if total == 1 { "match" } else { "matches" };
    Outcome::ok(
        format!("Found {total} {noun}\n\n{}", body.join("\n\n")),
        Some(meta),
    )
}
