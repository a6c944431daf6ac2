//! Fresh per-case directories: the runtime's working directory and its `DSH_HOME`, created
//! under the system temp dir (or a faster base), registered with [`super::cleanup`] and removed
//! on drop unless kept.

use std::path::{Path, PathBuf};

/// Fresh per-case directories (`cwd` and `home` for DSH_HOME), removed on drop.
#[derive(Debug)]
pub struct CaseDirs {
    root: PathBuf,
    /// The runtime's working directory.
    pub cwd: PathBuf,
    /// The runtime's DSH_HOME.
    pub home: PathBuf,
    keep: bool,
    /// Registration with [`super::cleanup`] (removed on an abrupt stop too).
    ticket: Option<u64>,
}

impl CaseDirs {
    /// Creates them under the system temp dir.
    pub fn new(keep: bool) -> std::io::Result<CaseDirs> {
        CaseDirs::new_in(&std::env::temp_dir(), keep)
    }

    /// Like [`CaseDirs::new`], under `base` instead of the system temp dir.
    pub fn new_in(base: &Path, keep: bool) -> std::io::Result<CaseDirs> {
        let make = || {
            super::cleanup::fresh_dir(base, "dsh-conformance-", |root| {
                let cwd = root.join("cwd");
                let home = root.join("home");
                std::fs::create_dir(&cwd)?;
                std::fs::create_dir(&home)?;
                // Canonical paths: the runtime reports resolved paths.
                Ok((cwd.canonicalize()?, home.canonicalize()?))
            })
        };
        let (root, (cwd, home), ticket) = if keep {
            let (root, dirs) = make()?;
            (root, dirs, None)
        } else {
            let (root, dirs, ticket) = super::cleanup::make_dir(make)?;
            (root, dirs, Some(ticket))
        };
        Ok(CaseDirs {
            root,
            cwd,
            home,
            keep,
            ticket,
        })
    }

    /// Where short-lived case directories go fastest: `/dev/shm` (memory) when `TMPDIR` is not
    /// set and it is a writable directory, else the system temp dir. Creating and removing a
    /// case's directories on a disk file system was a tenth of the black-box fuzzer's time.
    pub fn fast_base() -> PathBuf {
        static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        BASE.get_or_init(|| {
            let shm = Path::new("/dev/shm");
            let writable = || {
                let probe = shm.join(format!("dsh-conformance-probe-{}", std::process::id()));
                let ok = std::fs::create_dir(&probe).is_ok();
                let _ = std::fs::remove_dir(&probe);
                ok
            };
            if std::env::var_os("TMPDIR").is_none() && shm.is_dir() && writable() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            }
        })
        .clone()
    }

    /// Directories of an existing location (for cases that share DSH_HOME across processes).
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for CaseDirs {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.root);
        }
        if let Some(t) = self.ticket {
            super::cleanup::done(t);
        }
    }
}
