//! Session persistence under `DSH_HOME`: one small state file per session, so `session/resume`
//! works from a new process with turn numbers and `seq` continuing.
//!
//! Session ids are data, never paths: every byte outside `[A-Za-z0-9_-]` is escaped as `%XX`
//! (so `.`, `..`, `a/b`, `../x` are plain file names), and ids whose escaped form would be too
//! long for a file name are stored under a hash with the full id inside the file.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

/// What is stored for one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stored {
    /// Next `seq` the session log would append.
    pub seq: u64,
    /// Last turn number used.
    pub turns: u32,
}

/// A session store rooted at `<DSH_HOME>/dsh-reference/sessions`.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

const MAX_NAME: usize = 200;

/// The file name for a session id (`None` for `""`, which cannot be a path segment).
pub fn file_name(id: &str) -> Option<String> {
    if id.is_empty() {
        return None;
    }
    let mut s = String::with_capacity(id.len() + 5);
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    if s.len() > MAX_NAME {
        s = format!(
            "h-{:016x}{:016x}",
            fnv(id.as_bytes(), 0),
            fnv(id.as_bytes(), 1)
        );
    }
    s.push_str(".json");
    Some(s)
}

fn fnv(bytes: &[u8], seed: u64) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325 ^ seed.wrapping_mul(0x9e3779b97f4a7c15);
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

impl Store {
    /// A store under `home` (created lazily on first write).
    pub fn new(home: PathBuf) -> Store {
        Store {
            dir: home.join("dsh-reference").join("sessions"),
        }
    }

    /// The stored state of `id`, if any.
    pub fn load(&self, id: &str) -> Option<Stored> {
        let path = self.dir.join(file_name(id)?);
        let text = fs::read_to_string(path).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        if v.get("id")?.as_str()? != id {
            return None;
        }
        Some(Stored {
            seq: v.get("seq")?.as_u64()?,
            turns: v.get("turns")?.as_u64()? as u32,
        })
    }

    /// Stores the state of `id` (write to a temporary file, then rename: never a torn file).
    pub fn save(&self, id: &str, st: Stored) -> std::io::Result<()> {
        let Some(name) = file_name(id) else {
            return Err(std::io::Error::other("cannot encode an empty path segment"));
        };
        fs::create_dir_all(&self.dir)?;
        let tmp = self
            .dir
            .join(format!(".{}.{}.tmp", std::process::id(), name));
        let body = serde_json::json!({"id": id, "seq": st.seq, "turns": st.turns});
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(body.to_string().as_bytes())?;
        }
        fs::rename(&tmp, self.dir.join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_ids_become_plain_file_names() {
        assert_eq!(file_name(".").unwrap(), "%2E.json");
        assert_eq!(file_name("..").unwrap(), "%2E%2E.json");
        assert_eq!(file_name("../x").unwrap(), "%2E%2E%2Fx.json");
        assert_eq!(file_name("a/b").unwrap(), "a%2Fb.json");
        assert_eq!(file_name(""), None);
        let long = "é".repeat(500);
        let n = file_name(&long).unwrap();
        assert!(n.len() < 60 && !n.contains('/'));
    }
}
