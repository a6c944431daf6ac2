//! The event lines `resume-replays-history` forwarded, per session, in a file under `DSH_HOME`
//! (so that a runtime's next process, behind its own proxy, can replay them). Nothing is kept
//! without `DSH_HOME`.

use std::io::Write;
use std::path::PathBuf;

fn path(sid: &str) -> Option<PathBuf> {
    let home = std::env::var_os("DSH_HOME")?;
    let hex: String = sid.bytes().map(|b| format!("{b:02x}")).collect();
    Some(PathBuf::from(home).join("mutant-resume-history").join(hex))
}

/// Appends one line to the session's history.
pub(crate) fn append(sid: &str, line: &str) {
    let Some(p) = path(sid) else { return };
    if let Some(dir) = p.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p);
    if let Ok(mut f) = f {
        let _ = writeln!(f, "{line}");
    }
}

/// The session's history, oldest first (empty when there is none); `None` without `DSH_HOME`.
pub(crate) fn read(sid: &str) -> Option<Vec<String>> {
    let p = path(sid)?;
    let text = std::fs::read_to_string(p).unwrap_or_default();
    Some(text.lines().map(str::to_owned).collect())
}
