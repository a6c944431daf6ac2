//! Paths as the release resolves them: `path.resolve` for `initialize`'s `cwd` and the editor,
//! and the checked walk of a working-directory change (`session/working-directory/set`, the
//! `sdk-minimal` `working_directory` tool; docs/CONTRACT.md#s3.5).
//!
//! The walk, as recorded (`divergence_path_null_bytes`, and probes of 0.2.1rc2): the path is
//! joined to the session's directory without normalising it; a NUL character anywhere is Node's
//! `ERR_INVALID_ARG_VALUE`; each `..` needs the directory it leaves to exist (`cannot resolve
//! "<joined>": parent traversal crosses a missing directory`) and to be a directory (`… a parent
//! path segment is not a directory`); the end must be a directory (`working-directory: directory
//! does not exist: "<path as sent>"`).

use super::events::js_quote;
use crate::wire::json::held;

/// The directory a change to `path` from `cwd` lands in, or the release's error message.
/// `path` is not empty (callers answer that case their own way).
pub(super) fn cd(cwd: &str, path: &str) -> Result<String, String> {
    if path.chars().all(js_space) {
        // A path of whitespace only is refused before any walk, in words the release shares
        // with its file tools (probed under both profiles, found by the tool-call fuzzing).
        return Err(BLANK.into());
    }
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else if cwd.ends_with('/') {
        format!("{cwd}{path}")
    } else {
        format!("{cwd}/{path}")
    };
    if joined.contains('\0') {
        // Node refuses the path before looking at the file system (the session's own
        // directory may hold the NUL: `initialize` accepts any cwd).
        return Err(null_bytes(&joined));
    }
    let mut walked: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                let left = format!("/{}", walked.join("/"));
                let meta = std::fs::metadata(fs_path(&left));
                let why = match meta {
                    Ok(m) if m.is_dir() => None,
                    Ok(_) => Some("a parent path segment is not a directory"),
                    Err(_) => Some("parent traversal crosses a missing directory"),
                };
                if let Some(why) = why {
                    // Quoted with plain quotes, not JSON.stringify: controls stay as they are.
                    return Err(format!("cannot resolve \"{joined}\": {why}"));
                }
                walked.pop();
            }
            s => walked.push(s),
        }
    }
    let target = resolve(cwd, path);
    if !fs_path(&target).is_dir() {
        // Quoted as the client sent it, not resolved.
        return Err(missing(path));
    }
    Ok(target)
}

/// The release's refusal of a directory change to a path of whitespace only.
pub(super) const BLANK: &str = "file_path must be a non-empty string";

/// Whether JavaScript's `trim` removes `c`: Unicode white space but U+0085, and U+FEFF.
fn js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// Node's refusal of a path holding a NUL character, naming the path it was given.
fn null_bytes(path: &str) -> String {
    super::inspect::invalid_arg_value(
        "path",
        "must be a string, Uint8Array, or URL without null bytes",
        path,
    )
}

/// A session's own directory checked as the release looks at it (the working-directory get, a
/// turn's start): a NUL character anywhere is Node's `ERR_INVALID_ARG_VALUE` naming the
/// directory; a directory that is missing is `working-directory: directory does not exist`.
pub(super) fn must_exist(dir: &str) -> Result<(), String> {
    if dir.contains('\0') {
        return Err(null_bytes(dir));
    }
    if !fs_path(dir).is_dir() {
        return Err(missing(dir));
    }
    Ok(())
}

/// The release's refusal of a directory that is not there, quoting `path` as JSON.stringify does.
pub(super) fn missing(path: &str) -> String {
    format!(
        "working-directory: directory does not exist: {}",
        js_quote(path)
    )
}

/// A path (held text) as the file system sees it: Node writes a lone surrogate as U+FFFD.
pub(super) fn fs_path(p: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(held::to_utf8_lossy(p).into_owned())
}

/// `path.resolve(base, p)` on POSIX: absolute, normalised, no trailing slash.
pub(super) fn resolve(base: &str, p: &str) -> String {
    let joined = if p.starts_with('/') {
        p.to_string()
    } else {
        format!("{base}/{p}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_is_posix_path_resolve() {
        assert_eq!(resolve("/a/b", "."), "/a/b");
        assert_eq!(resolve("/a/b", "../c/"), "/a/c");
        assert_eq!(resolve("/a", "/x/./y/.."), "/x");
        assert_eq!(resolve("/", ".."), "/");
    }

    /// Recorded from the release (see the module docs), with `/tmp` for its directory.
    #[test]
    fn a_change_walks_each_parent_as_the_release_does() {
        let missing = "/nonexistent/dsh-fuzz";
        let crossing = |j: &str| {
            Err(format!(
                "cannot resolve \"{j}\": parent traversal crosses a missing directory"
            ))
        };
        assert_eq!(cd(missing, ".."), crossing("/nonexistent/dsh-fuzz/.."));
        assert_eq!(cd(missing, "a/.."), crossing("/nonexistent/dsh-fuzz/a/.."));
        assert_eq!(cd(missing, "/nonexistent/.."), crossing("/nonexistent/.."));
        assert_eq!(
            cd("/tmp", "nonexist/../.."),
            crossing("/tmp/nonexist/../..")
        );
        assert_eq!(cd(missing, "/tmp/../tmp"), Ok("/tmp".into()));
        assert_eq!(cd("/tmp", "../../tmp"), Ok("/tmp".into()));
        assert_eq!(
            cd(missing, "x"),
            Err("working-directory: directory does not exist: \"x\"".into())
        );
        let file = std::env::temp_dir().join(format!("dsh-cd-file-{}", std::process::id()));
        std::fs::write(&file, b"").unwrap();
        let through = format!("{}/..", file.display());
        assert_eq!(
            cd("/", &through),
            Err(format!(
                "cannot resolve \"{through}\": a parent path segment is not a directory"
            ))
        );
        let _ = std::fs::remove_file(&file);
        // The path is quoted as is (a control character stays one).
        assert_eq!(
            cd(missing, "a\u{6}/.."),
            crossing("/nonexistent/dsh-fuzz/a\u{6}/..")
        );
    }
}
