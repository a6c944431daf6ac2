//! Which files `grep` leaves out as ripgrep does (recorded: `sdk_tool_grep_ignores`): hidden
//! files, and those an ignore file names — `.ignore` and `.rgignore` always, `.gitignore` inside a
//! git repository (a directory at or above the search root holding `.git`). A rule applies
//! below its file's directory, to the paths under the search root (the root itself is searched
//! whatever the rules say); `!` rules are not read (the reference does not re-include).

use super::fs::Fs;
use super::search::glob_regex;
use std::path::{Path, PathBuf};

/// One rule of an ignore file: the directory it is relative to, its glob, and whether it
/// names only directories.
struct Rule {
    base: PathBuf,
    glob: String,
    dir_only: bool,
}

fn rules_in(fs: &dyn Fs, dir: &Path, git: bool) -> Vec<Rule> {
    let names: &[&str] = if git {
        &[".gitignore", ".ignore", ".rgignore"]
    } else {
        &[".ignore", ".rgignore"]
    };
    let mut out = Vec::new();
    for name in names {
        let Ok(text) = fs.read(&dir.join(name)) else {
            continue;
        };
        for line in text.lines().map(str::trim_end) {
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let dir_only = line.ends_with('/');
            let glob = line.trim_end_matches('/').to_owned();
            out.push(Rule {
                base: dir.to_path_buf(),
                glob,
                dir_only,
            });
        }
    }
    out
}

/// The rules that apply under `root`: its ancestors' up to the repository's top (in a git
/// repository), then those of every directory below it, all read once.
pub struct Ignores {
    root: PathBuf,
    rules: Vec<Rule>,
}

impl Ignores {
    /// The rules for a search of `root`, whose files (from the walk) are `files`.
    pub fn new(fs: &dyn Fs, root: &Path, files: &[PathBuf]) -> Self {
        let top = root
            .ancestors()
            .find(|a| fs.kind(&a.join(".git")).is_some());
        let git = top.is_some();
        let mut dirs: Vec<PathBuf> = match top {
            Some(t) => root
                .ancestors()
                .take_while(|a| a.starts_with(t))
                .map(Path::to_path_buf)
                .collect(),
            None => vec![root.to_path_buf()],
        };
        for f in files {
            dirs.extend(
                f.ancestors()
                    .skip(1)
                    .take_while(|a| a.starts_with(root) && *a != root)
                    .map(Path::to_path_buf),
            );
        }
        dirs.sort();
        dirs.dedup();
        let rules = dirs.iter().flat_map(|d| rules_in(fs, d, git)).collect();
        Ignores {
            root: root.to_path_buf(),
            rules,
        }
    }

    /// Whether `file` (under the root) is left out: it, or a directory between it and the
    /// root, is hidden or matched by a rule.
    pub fn ignored(&self, file: &Path) -> bool {
        let Ok(rel) = file.strip_prefix(&self.root) else {
            return false;
        };
        let parts: Vec<_> = rel.components().collect();
        (0..parts.len()).any(|i| {
            let path: PathBuf = self.root.join(parts[..=i].iter().collect::<PathBuf>());
            let is_dir = i + 1 < parts.len();
            let name = parts[i].as_os_str().to_string_lossy();
            name.starts_with('.') || self.rules.iter().any(|r| r.matches(&path, is_dir))
        })
    }
}

impl Rule {
    fn matches(&self, path: &Path, is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        let Ok(rel) = path.strip_prefix(&self.base) else {
            return false;
        };
        let rel = rel.to_string_lossy();
        let Some(re) = glob_regex(&self.glob) else {
            return false;
        };
        if self.glob.trim_start_matches('/').contains('/') || self.glob.starts_with('/') {
            re.is_match(&rel)
        } else {
            re.is_match(rel.rsplit('/').next().unwrap_or(&rel))
        }
    }
}
