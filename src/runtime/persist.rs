//! Session persistence under `DSH_HOME`, so `session/resume` works from a new process with turn
//! numbers and `seq` continuing.
//!
//! One append-only log, `<DSH_HOME>/dsh-reference/sessions.jsonl`, one JSON line per state change
//! (`{"id","seq","turns"}`, with `"goal"` while the session has one; the last line of an id
//! wins). Session ids are data inside JSON strings,
//! never file names, so `../x`, `a/b`, `.` or a 5 000-character id cannot touch the filesystem.
//! Appending one line is one `write(2)` (a per-session file written with rename cost ~2 ms a turn
//! on a busy machine; this costs microseconds). Lines that do not parse (a torn last line after a
//! crash) are skipped. Other processes' appends are picked up incrementally on lookup.
//!
//! A session open in a process is owned by it, as the real runtime's write handle is: the store
//! holds an exclusive `flock(2)` on the session's lock file under `dsh-reference/locks/` (named
//! by the id's hex, or a 128-bit hash of a long id) from creation or resume until the process
//! exits, or [`Store::release_all`]. Another process resuming it meanwhile is refused
//! ([`Claim::Owned`]); a crashed owner's locks go with it. Two in-memory runtimes of one process
//! open the file separately, so they exclude each other too.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// Why [`Store::claim`] refused a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Another process (or another runtime of this one) has it open.
    Owned,
}

/// Ids up to this many bytes name their lock file by their hex; longer ones by a hash.
const HEX_NAME_MAX: usize = 96;

/// What is stored for one session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stored {
    /// Next `seq` the session log would append.
    pub seq: u64,
    /// Last turn number used.
    pub turns: u32,
    /// Its goal's durable state (`Goal::durable` in the runtime's goals), if it has one.
    pub goal: Option<serde_json::Value>,
}

/// The session store of one `DSH_HOME`.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    index: HashMap<Box<str>, Stored>,
    /// Bytes of the log already read into `index`.
    read_to: u64,
    /// Incomplete last line seen while reading (a writer may be mid-append).
    partial: Vec<u8>,
    writer: Option<File>,
    /// The lock files of the sessions this store owns (dropping one releases its lock).
    held: HashMap<Box<str>, File>,
}

impl Store {
    /// The store under `home` (nothing is created until the first save).
    pub fn new(home: PathBuf) -> Store {
        Store {
            path: home.join("dsh-reference").join("sessions.jsonl"),
            index: HashMap::new(),
            read_to: 0,
            partial: Vec::new(),
            writer: None,
            held: HashMap::new(),
        }
    }

    /// Takes ownership of `id` for this store until [`Store::release_all`] or drop. Claiming an
    /// id it owns already succeeds; `Err(Claim::Owned)` when someone else holds it. When the lock
    /// file cannot be made at all (an unwritable home), the claim succeeds: saving reports it.
    pub fn claim(&mut self, id: &str) -> Result<(), Claim> {
        if self.held.contains_key(id) {
            return Ok(());
        }
        let Some(dir) = self.path.parent().map(|d| d.join("locks")) else {
            return Ok(());
        };
        let file = fs::create_dir_all(&dir).and_then(|()| {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(dir.join(lock_name(id)))
        });
        let Ok(file) = file else {
            return Ok(());
        };
        // SAFETY: flock on a descriptor this function owns; no memory is passed.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Err(Claim::Owned);
            }
            // Locks unsupported here (some network filesystems): nobody can be excluded.
            return Ok(());
        }
        self.held.insert(id.into(), file);
        Ok(())
    }

    /// Gives up every session this store owns (the process is exiting).
    pub fn release_all(&mut self) {
        self.held.clear();
    }

    /// Path of the log file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Reads what was appended since the last look (by any process).
    fn refresh(&mut self) {
        let Ok(mut f) = File::open(&self.path) else {
            return;
        };
        let Ok(len) = f.metadata().map(|m| m.len()) else {
            return;
        };
        if len <= self.read_to || f.seek(SeekFrom::Start(self.read_to)).is_err() {
            return;
        }
        let mut buf = Vec::with_capacity((len - self.read_to) as usize);
        if f.read_to_end(&mut buf).is_err() {
            return;
        }
        self.read_to += buf.len() as u64;
        let mut data = std::mem::take(&mut self.partial);
        data.extend_from_slice(&buf);
        let complete = data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        for line in data[..complete].split(|&b| b == b'\n') {
            if let Some((id, st)) = parse_line(line) {
                self.index.insert(id.into(), st);
            }
        }
        self.partial = data[complete..].to_vec();
    }

    /// The stored state of `id`, if any, with what other processes appended since the last look
    /// (one that owned the session may have run turns since).
    pub fn load(&mut self, id: &str) -> Option<Stored> {
        self.refresh();
        self.index.get(id).cloned()
    }

    /// Records the state of `id` (one appended line).
    pub fn save(&mut self, id: &str, st: Stored) -> std::io::Result<()> {
        if id.is_empty() {
            return Err(std::io::Error::other("cannot encode an empty path segment"));
        }
        if self.writer.is_none() {
            if let Some(dir) = self.path.parent() {
                fs::create_dir_all(dir)?;
            }
            let mut w = OpenOptions::new()
                .create(true)
                .read(true)
                .append(true)
                .open(&self.path)?;
            // A process that died mid-append left a torn last line: end it so our records parse.
            let len = w.metadata()?.len();
            if len > 0 {
                let mut last = [0u8; 1];
                w.seek(SeekFrom::Start(len - 1))?;
                w.read_exact(&mut last)?;
                if last[0] != b'\n' {
                    w.write_all(b"\n")?;
                }
            }
            self.writer = Some(w);
        }
        let mut v = serde_json::json!({"id": id, "seq": st.seq, "turns": st.turns});
        if let Some(g) = &st.goal {
            v["goal"] = g.clone();
        }
        let mut line = v.to_string();
        line.push('\n');
        if let Some(w) = self.writer.as_mut() {
            w.write_all(line.as_bytes())?;
        }
        self.index.insert(id.into(), st);
        Ok(())
    }
}

/// The lock file of `id`: `x<hex of its UTF-8>.lock`, or `h<128-bit FNV-1a pair>.lock` for an
/// id longer than [`HEX_NAME_MAX`] bytes (file names stop at 255 bytes).
fn lock_name(id: &str) -> String {
    use std::fmt::Write as _;
    let mut name = String::with_capacity(2 * HEX_NAME_MAX + 6);
    if id.len() <= HEX_NAME_MAX {
        name.push('x');
        for b in id.bytes() {
            let _ = write!(name, "{b:02x}");
        }
    } else {
        let fnv = |basis: u64| {
            id.bytes().fold(basis, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            })
        };
        let _ = write!(
            name,
            "h{:016x}{:016x}",
            fnv(0xcbf2_9ce4_8422_2325),
            fnv(0x8422_2325_cbf2_9ce4)
        );
    }
    name.push_str(".lock");
    name
}

fn parse_line(line: &[u8]) -> Option<(String, Stored)> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let id = v.get("id")?.as_str()?.to_string();
    let seq = v.get("seq")?.as_u64()?;
    let turns = u32::try_from(v.get("turns")?.as_u64()?).ok()?;
    let goal = v.get("goal").cloned();
    Some((id, Stored { seq, turns, goal }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(seq: u64, turns: u32) -> Stored {
        Stored {
            seq,
            turns,
            goal: None,
        }
    }

    #[test]
    fn the_last_record_wins_and_torn_lines_are_skipped() {
        let home = std::env::temp_dir().join(format!("dsh-persist-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&home);
        let mut a = Store::new(home.clone());
        a.save("../x", st(3, 0)).unwrap();
        a.save("../x", st(17, 1)).unwrap();
        assert!(a.save("", Stored::default()).is_err());
        let mut f = OpenOptions::new().append(true).open(a.path()).unwrap();
        f.write_all(b"{\"id\":\"torn\",\"se").unwrap();
        let mut b = Store::new(home.clone());
        assert_eq!(b.load("../x"), Some(st(17, 1)));
        assert_eq!(b.load("torn"), None);
        // A new writer ends the torn line first; its records are found by an older reader.
        let mut c = Store::new(home.clone());
        c.save("late", st(6, 2)).unwrap();
        assert_eq!(b.load("late"), Some(st(6, 2)));
        // A record another store appends later replaces one already looked up.
        c.save("../x", st(30, 2)).unwrap();
        assert_eq!(b.load("../x"), Some(st(30, 2)));
        assert_eq!(b.load("torn"), None);
        // A goal is kept with its session, and goes when a later record has none.
        let goal = serde_json::json!({"goal": {"id": "goal-1", "phase": "blocked"}});
        let with_goal = Stored {
            goal: Some(goal),
            ..st(31, 2)
        };
        c.save("../x", with_goal.clone()).unwrap();
        assert_eq!(b.load("../x"), Some(with_goal));
        c.save("../x", st(32, 3)).unwrap();
        assert_eq!(b.load("../x"), Some(st(32, 3)));
        let _ = fs::remove_dir_all(&home);
    }

    #[test]
    fn a_session_is_owned_by_one_store_until_it_releases_or_drops() {
        let home = std::env::temp_dir().join(format!("dsh-persist-lock-{}", std::process::id()));
        let _ = fs::remove_dir_all(&home);
        let (mut a, mut b) = (Store::new(home.clone()), Store::new(home.clone()));
        let long = "x".repeat(5000);
        for id in ["s1", "../x", long.as_str()] {
            assert_eq!(a.claim(id), Ok(()));
            assert_eq!(a.claim(id), Ok(()), "claiming again is fine");
            assert_eq!(b.claim(id), Err(Claim::Owned), "{id:.20}");
        }
        assert_eq!(b.claim("s2"), Ok(()));
        assert_eq!(a.claim("s2"), Err(Claim::Owned));
        a.release_all();
        assert_eq!(b.claim("s1"), Ok(()));
        drop(b);
        assert_eq!(a.claim("s2"), Ok(()));
        // Distinct ids get distinct names, long ones too; names fit a file name.
        assert_ne!(lock_name(&"a".repeat(200)), lock_name(&"b".repeat(200)));
        assert_ne!(lock_name("ab"), lock_name("ba"));
        assert!(lock_name(&long).len() < 64 && lock_name(&"é".repeat(48)).len() < 255);
        let _ = fs::remove_dir_all(&home);
    }
}
