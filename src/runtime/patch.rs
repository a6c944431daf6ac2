//! Patch layers (docs/CONTRACT.md#s13.6): the profile's user layer
//! (`$DSH_HOME/profiles/<profile>/cordis.patch.yml`), the home layer (`$DSH_HOME/cordis.patch.yml`),
//! then every `--patch <file>` overlay, applied over the profile's rows as the release's loader
//! does, with its diagnostics.
//!
//! A patch list is a top-level YAML array of mappings. An entry with `insert: [rows]` (and no
//! `id`) appends rows; an entry with `id` sets its other keys on that row (`disabled: true`
//! turns it off), and is skipped silently when no row has that id or its `name` differs. The
//! release evaluates `!!js` values; the reference keeps the row's previous state for them.

use super::yaml::{self, Yaml};
use std::io;
use std::path::{Path, PathBuf};

/// The diagnostic prefix of the release's launcher.
pub const BIN: &str = "dsh";

/// One row of the composed tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Its id (what patches target).
    pub id: String,
    /// Its package (or the `file://` URL of an inserted path).
    pub name: String,
    /// Whether it is disabled.
    pub disabled: bool,
    /// Whether a patch inserted it (the profile's own rows always activate).
    pub inserted: bool,
}

/// What a patch list is called in diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// A `--patch` overlay (required: a missing file is an error).
    Overlay,
    /// A user layer under `DSH_HOME` (optional: a missing file is no layer).
    Patches,
}

impl Label {
    fn as_str(self) -> &'static str {
        match self {
            Label::Overlay => "overlay",
            Label::Patches => "patches",
        }
    }
}

/// Node's `String(error)` of a failed `readFileSync(file)`.
fn node_read_error(e: &io::Error, file: &Path) -> String {
    let f = file.display();
    match e.raw_os_error() {
        Some(libc::ENOENT) => format!("Error: ENOENT: no such file or directory, open '{f}'"),
        Some(libc::EACCES) => format!("Error: EACCES: permission denied, open '{f}'"),
        Some(libc::EISDIR) => "Error: EISDIR: illegal operation on a directory, read".into(),
        Some(libc::ENOTDIR) => format!("Error: ENOTDIR: not a directory, open '{f}'"),
        _ => format!("Error: {e}"),
    }
}

/// Reads one patch list: `Ok(None)` for an optional layer whose file does not exist; `Err` is
/// the release's message (without the `Error: ` its crash report puts before it).
pub fn read_layer(file: &Path, label: Label) -> Result<Option<Vec<Yaml>>, String> {
    let content = match std::fs::read(file) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if label == Label::Patches && e.kind() == io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => {
            return Err(format!(
                "{BIN}: failed to read {} {}: {}",
                label.as_str(),
                file.display(),
                node_read_error(&e, file)
            ))
        }
    };
    parse_list(file, &content, label).map(Some)
}

/// Parses and validates one patch list's text.
pub fn parse_list(file: &Path, content: &str, label: Label) -> Result<Vec<Yaml>, String> {
    let (l, f) = (label.as_str(), file.display());
    let parsed =
        yaml::parse(content).map_err(|e| format!("{BIN}: failed to parse {l} {f}: {e}"))?;
    let Yaml::Seq(entries) = parsed else {
        return Err(format!(
            "{BIN}: {l} {f} must be a top-level YAML array of loader patch entries"
        ));
    };
    for (i, e) in entries.iter().enumerate() {
        if !matches!(e, Yaml::Map(_)) {
            return Err(format!(
                "{BIN}: {l} entry {} in {f} must be a mapping (a loader patch entry)",
                i + 1
            ));
        }
    }
    Ok(entries)
}

/// JavaScript truthiness of a plain value (`None` for a `!!js` expression).
fn truthy(v: &Yaml) -> Option<bool> {
    Some(match v {
        Yaml::Null => false,
        Yaml::Bool(b) => *b,
        Yaml::Num(n) => *n != 0.0 && !n.is_nan(),
        Yaml::Str(s) => !s.is_empty(),
        Yaml::Js(_) => return None,
        Yaml::Seq(_) | Yaml::Map(_) => true,
    })
}

/// An inserted row's name as the loader resolves it: paths (absolute, `./`, `../`) become
/// `file://` URLs beside the patch file; package names stay as written.
fn anchor(name: &str, file: &Path) -> String {
    if name.starts_with('/') || name.starts_with("./") || name.starts_with("../") {
        let base = file.parent().unwrap_or(Path::new("/"));
        let p = normalize(&base.join(name));
        format!("file://{}", url_path(&p.to_string_lossy()))
    } else {
        name.to_owned()
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(s) => out.push(s),
            _ => {}
        }
    }
    out
}

fn url_path(p: &str) -> String {
    p.chars()
        .map(|c| match c {
            ' ' => "%20".to_owned(),
            '%' => "%25".to_owned(),
            '#' => "%23".to_owned(),
            '?' => "%3F".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

/// Applies one patch list (read from `file`) to `rows`.
pub fn apply(rows: &mut Vec<Row>, patches: &[Yaml], file: &Path) {
    for patch in patches {
        let id = patch.get("id").and_then(Yaml::as_str);
        if let Some(insert) = patch.get("insert") {
            // Inserting into a group: the reference's rows are no groups (the release warns
            // through its logger only).
            if id.is_some() {
                continue;
            }
            let Yaml::Seq(new) = insert else { continue };
            for r in new {
                let name = r.get("name").and_then(Yaml::as_str).unwrap_or("");
                rows.push(Row {
                    id: r.get("id").and_then(Yaml::as_str).unwrap_or("").to_owned(),
                    name: anchor(name, file),
                    disabled: r.get("disabled").and_then(truthy).unwrap_or(false),
                    inserted: true,
                });
            }
            continue;
        }
        let Some(id) = id else { continue };
        let Some(row) = rows.iter_mut().rev().find(|r| r.id == id) else {
            continue;
        };
        if let Some(name) = patch.get("name").and_then(Yaml::as_str) {
            if name != row.name {
                continue;
            }
        }
        if let Some(d) = patch.get("disabled").and_then(truthy) {
            row.disabled = d;
        }
    }
}

/// Why an inserted row cannot be imported (`None` when it loads): a package the release does not
/// ship, or a path (the reference loads no plugin code). `import_base` is the profile directory
/// the loader resolves names from (`<home>/profiles/<profile>/`).
pub fn import_failure(row: &Row, import_base: &str) -> Option<String> {
    if !row.inserted || super::profile::shipped_package(&row.name) {
        return None;
    }
    Some(match row.name.strip_prefix("file://") {
        Some(path) => format!(
            "failed to import: Error [ERR_MODULE_NOT_FOUND]: Cannot find module '{path}' imported from {import_base}"
        ),
        None => format!(
            "failed to import: Error [ERR_MODULE_NOT_FOUND]: Cannot find package '{}' imported from {import_base}",
            row.name
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row> {
        super::super::profile::MINIMAL_ROWS
            .iter()
            .map(|(id, name)| Row {
                id: (*id).into(),
                name: (*name).into(),
                disabled: false,
                inserted: false,
            })
            .collect()
    }

    #[test]
    fn invalid_lists_fail_with_the_release_messages() {
        let f = Path::new("/w/overlay.yml");
        let e = parse_list(f, "- [unclosed\n", Label::Overlay).unwrap_err();
        assert!(e.starts_with("dsh: failed to parse overlay /w/overlay.yml: YAMLException: unexpected end of the stream within a flow collection (2:1)"), "{e}");
        assert_eq!(
            parse_list(f, "foo: bar\n", Label::Overlay).unwrap_err(),
            "dsh: overlay /w/overlay.yml must be a top-level YAML array of loader patch entries"
        );
        assert_eq!(
            parse_list(f, "", Label::Patches).unwrap_err(),
            "dsh: patches /w/overlay.yml must be a top-level YAML array of loader patch entries"
        );
        assert_eq!(
            parse_list(f, "- 3\n", Label::Overlay).unwrap_err(),
            "dsh: overlay entry 1 in /w/overlay.yml must be a mapping (a loader patch entry)"
        );
        let e = read_layer(Path::new("/nonexistent/o.yml"), Label::Overlay).unwrap_err();
        assert_eq!(e, "dsh: failed to read overlay /nonexistent/o.yml: Error: ENOENT: no such file or directory, open '/nonexistent/o.yml'");
        assert_eq!(
            read_layer(Path::new("/nonexistent/o.yml"), Label::Patches),
            Ok(None)
        );
    }

    #[test]
    fn disables_and_inserts_apply_and_unknown_packages_do_not_activate() {
        let f = Path::new("/w/p/overlay.yml");
        let list = parse_list(
            f,
            "- id: tool-fs\n  disabled: true\n- id: nope\n  disabled: true\n- insert:\n    - id: a\n      name: '@acme/one'\n    - id: b\n      name: ./x.js\n    - id: c\n      name: '@deepseek-ai/dsh-tool-fs'\n",
            Label::Overlay,
        )
        .unwrap();
        let mut r = rows();
        apply(&mut r, &list, f);
        assert!(r.iter().any(|r| r.id == "tool-fs" && r.disabled));
        let lines: Vec<String> = r
            .iter()
            .filter_map(|r| import_failure(r, "/h/profiles/sdk-minimal/"))
            .collect();
        assert_eq!(lines, [
            "failed to import: Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@acme/one' imported from /h/profiles/sdk-minimal/",
            "failed to import: Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/w/p/x.js' imported from /h/profiles/sdk-minimal/",
        ]);
    }
}
