//! Session persistence under `DSH_HOME`, so `session/resume` works from a new process with turn
//! numbers and `seq` continuing.
//!
//! One append-only log, `<DSH_HOME>/dsh-reference/sessions.jsonl`, one JSON line per state change
//! (`{"id","seq","turns"}`; the last line of an id wins). Session ids are data inside JSON strings,
//! never file names, so `../x`, `a/b`, `.` or a 5 000-character id cannot touch the filesystem.
//! Appending one line is one `write(2)` (a per-session file written with rename cost ~2 ms a turn
//! on a busy machine; this costs microseconds). Lines that do not parse (a torn last line after a
//! crash) are skipped. Other processes' appends are picked up incrementally on lookup.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

/// What is stored for one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stored {
    /// Next `seq` the session log would append.
    pub seq: u64,
    /// Last turn number used.
    pub turns: u32,
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
        }
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

    /// The stored state of `id`, if any.
    pub fn load(&mut self, id: &str) -> Option<Stored> {
        if !self.index.contains_key(id) {
            self.refresh();
        }
        self.index.get(id).copied()
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
        let mut line = serde_json::json!({"id": id, "seq": st.seq, "turns": st.turns}).to_string();
        line.push('\n');
        if let Some(w) = self.writer.as_mut() {
            w.write_all(line.as_bytes())?;
        }
        self.index.insert(id.into(), st);
        Ok(())
    }
}

fn parse_line(line: &[u8]) -> Option<(String, Stored)> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let id = v.get("id")?.as_str()?.to_string();
    let seq = v.get("seq")?.as_u64()?;
    let turns = u32::try_from(v.get("turns")?.as_u64()?).ok()?;
    Some((id, Stored { seq, turns }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_record_wins_and_torn_lines_are_skipped() {
        let home = std::env::temp_dir().join(format!("dsh-persist-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&home);
        let mut a = Store::new(home.clone());
        a.save("../x", Stored { seq: 3, turns: 0 }).unwrap();
        a.save("../x", Stored { seq: 17, turns: 1 }).unwrap();
        assert!(a.save("", Stored::default()).is_err());
        let mut f = OpenOptions::new().append(true).open(a.path()).unwrap();
        f.write_all(b"{\"id\":\"torn\",\"se").unwrap();
        let mut b = Store::new(home.clone());
        assert_eq!(b.load("../x"), Some(Stored { seq: 17, turns: 1 }));
        assert_eq!(b.load("torn"), None);
        // A new writer ends the torn line first; its records are found by an older reader.
        let mut c = Store::new(home.clone());
        c.save("late", Stored { seq: 6, turns: 2 }).unwrap();
        assert_eq!(b.load("late"), Some(Stored { seq: 6, turns: 2 }));
        assert_eq!(b.load("torn"), None);
        let _ = fs::remove_dir_all(&home);
    }
}
