//! Import of raw transcripts (both layouts of the real runtime's recordings in
//! `fixtures/real-0.2.1rc2/raw/`, and what `record` writes) into traces, with identity-preserving
//! redaction:
//! - each distinct UUID (and model tool-use id `toolu_…`) becomes one capture (`{{$m1}}` for
//!   message ids, `{{$s1}}` child sessions, `{{$tool1}}`, `{{$id1}}` …), bound where it first
//!   appears and substituted into later sends;
//! - retry back-off (`delayMs`, jittered) becomes `{{number}}`; wall-clock stamps (`…At`, any
//!   epoch-millisecond integer) become `{{int}}`; random job ids (`bash-<hex>`) become captures;
//! - `time`/`time0` become `{{int}}`; an event's `seq` becomes `{{seq}}` (increasing per session)
//!   and values derived from seq or stream timing (`throughSeq`, `sourceEventSeqs`, `messageSeqs`,
//!   `dt`, the chunking `texts`) wildcards;
//! - paths of the recording machine's case directory become `{{cwd}}`.
//!
//! Orderings the contract leaves open stay open by construction of the matcher (sessions are
//! separate lanes, responses match by id); a prompt response is written right after the receipt
//! that bound its messageId, so it is ordered after the receipt only (docs/CONTRACT.md#s5).
//!
//! Layout: `transcript` reads either layout into [`RawEvent`]s, `redact` holds the [`Redactor`],
//! `write` turns events into trace text ([`to_trace`]).

mod redact;
mod transcript;
mod write;

pub use redact::Redactor;
pub use transcript::{parse_transcript, RawEvent};
pub use write::{to_trace, ImportInfo};

/// Why a transcript cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// 1-based line in the transcript.
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "transcript line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ImportError {}
/// Imports a transcript file's text into trace text.
pub fn import(text: &str, case: &str, source: &str) -> Result<String, ImportError> {
    let (events, description) = parse_transcript(text)?;
    Ok(to_trace(
        &events,
        &ImportInfo {
            case: case.to_owned(),
            source: source.to_owned(),
            description,
            ..ImportInfo::default()
        },
    ))
}

/// Imports the raw transcript at `path` into trace text, as `dsh-conformance import` does: the
/// case is the file's stem (`sigint_idle` for `raw/sigint_idle.jsonl`), the `# source:` line
/// names the file with its directory (`raw/sigint_idle.jsonl`). The error, `PATH: why`, says
/// that the file cannot be read or its transcript cannot be converted.
pub fn import_file(path: &std::path::Path) -> Result<String, String> {
    let name = |p: Option<&std::ffi::OsStr>| p.map(|s| s.to_string_lossy().into_owned());
    let stem = name(path.file_stem()).unwrap_or_default();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let source = format!(
        "{}/{}",
        name(path.parent().and_then(|p| p.file_name())).unwrap_or_default(),
        name(path.file_name()).unwrap_or_default()
    );
    import(&text, &stem, &source).map_err(|e| format!("{}: {e}", path.display()))
}
