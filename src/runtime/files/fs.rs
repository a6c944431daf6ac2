//! The file system as the file tools see it: a small seam ([`Fs`]) over the disk ([`Disk`]),
//! and the release's path vocabulary: a call's *display path* (the session's directory joined
//! with the path as written, not normalised) and its *process path* (the canonical absolute
//! path: the deepest existing ancestor's real path and the rest, `..` folded).

use std::io;
use std::path::{Component, Path, PathBuf};

/// What a path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A regular file, with its version (changes whenever its content may have).
    File(Version),
    /// A directory.
    Dir,
    /// Something else (a FIFO, a device, a socket).
    Other,
}

/// A file's version: its size and modification time (nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version(pub u64, pub u128);

/// One file a walk found: its path and modification time.
#[derive(Debug, Clone)]
pub struct Found {
    /// The file's path (under the walked directory, as joined).
    pub path: PathBuf,
    /// Modification time, nanoseconds since the epoch, then the inode number: files written
    /// within one clock tick keep the order they were created in.
    pub mtime: (u128, u64),
}

/// The operations the file tools need.
pub trait Fs {
    /// What `path` holds (`None`: nothing).
    fn kind(&self, path: &Path) -> Option<Kind>;
    /// The text of the file at `path` (invalid UTF-8 replaced, as Node decodes it).
    fn read(&self, path: &Path) -> io::Result<String>;
    /// Writes `text` to `path`, creating its parent directories.
    fn write(&self, path: &Path, text: &str) -> io::Result<()>;
    /// The real path of an existing `path`.
    fn real(&self, path: &Path) -> io::Result<PathBuf>;
    /// The regular files under `dir`: per directory its files first (oldest first, see
    /// [`Found::mtime`]), then its
    /// subdirectories (by name); `.git`, `.svn`, `.bzr`, `.hg` and `_darcs` are not entered.
    fn walk(&self, dir: &Path) -> Vec<Found>;
}

/// The local disk.
pub struct Disk;

fn version(m: &std::fs::Metadata) -> Version {
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Version(m.len(), mtime)
}

const VCS: &[&str] = &[".git", ".svn", ".bzr", ".hg", "_darcs"];

impl Fs for Disk {
    fn kind(&self, path: &Path) -> Option<Kind> {
        let m = std::fs::metadata(path).ok()?;
        Some(if m.is_file() {
            Kind::File(version(&m))
        } else if m.is_dir() {
            Kind::Dir
        } else {
            Kind::Other
        })
    }
    fn read(&self, path: &Path) -> io::Result<String> {
        Ok(String::from_utf8_lossy(&std::fs::read(path)?).into_owned())
    }
    fn write(&self, path: &Path, text: &str) -> io::Result<()> {
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::write(path, text)
    }
    fn real(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
    fn walk(&self, dir: &Path) -> Vec<Found> {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let (mut files, mut dirs) = (Vec::new(), Vec::new());
        for e in rd.flatten() {
            let Ok(m) = std::fs::metadata(e.path()) else {
                continue;
            };
            if m.is_file() {
                files.push(Found {
                    path: e.path(),
                    mtime: (version(&m).1, std::os::unix::fs::MetadataExt::ino(&m)),
                });
            } else if m.is_dir() && !VCS.iter().any(|v| e.file_name() == *v) {
                dirs.push(e.path());
            }
        }
        files.sort_by(|a, b| (a.mtime, &a.path).cmp(&(b.mtime, &b.path)));
        dirs.sort();
        for d in dirs {
            files.extend(self.walk(&d));
        }
        files
    }
}

/// The display path of `written` in a session whose directory is `cwd`.
pub fn display(cwd: &str, written: &str) -> String {
    if written.starts_with('/') {
        written.to_owned()
    } else if cwd.ends_with('/') {
        format!("{cwd}{written}")
    } else {
        format!("{cwd}/{written}")
    }
}

/// `path` with `.` and `..` folded lexically.
pub fn folded(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// The process path of `display`: its deepest existing ancestor's real path, then the rest.
pub fn canonical(fs: &dyn Fs, display: &str) -> PathBuf {
    let path = folded(Path::new(display));
    let mut rest = Vec::new();
    let mut cur = path.as_path();
    loop {
        if let Ok(real) = fs.real(cur) {
            return rest
                .iter()
                .rev()
                .fold(real, |p, n: &&std::ffi::OsStr| p.join(n));
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                cur = parent;
            }
            _ => return path,
        }
    }
}
