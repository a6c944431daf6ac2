//! `dsh-conformance import`: raw stdio transcripts converted into golden traces.

use std::path::PathBuf;

/// Convert raw stdio transcripts into golden traces (identity-preserving redaction).
///
/// Reads the layouts of fixtures/real-0.2.1rc2/raw/; ids, times and paths become placeholders. Each trace goes to
/// stdout, or with -o to DIR/STEM.trace (STEM: the transcript's file name without its
/// extension). Exit 0, or 2 when a transcript cannot be read or converted (the others are
/// still converted).
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// Write each trace to DIR/STEM.trace (DIR is created when missing).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Raw transcripts (`.jsonl`).
    #[arg(value_name = "RAW", required = true)]
    pub files: Vec<PathBuf>,
}

impl ImportArgs {
    /// Runs the import; returns the exit code.
    pub fn run(&self) -> i32 {
        if let Some(d) = &self.output {
            if let Err(e) = std::fs::create_dir_all(d) {
                eprintln!("dsh-conformance import: {}: {e}", d.display());
                return 2;
            }
        }
        let mut code = 0;
        for f in &self.files {
            let stem = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = match std::fs::read_to_string(f) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("dsh-conformance import: {}: {e}", f.display());
                    code = 2;
                    continue;
                }
            };
            let source = format!(
                "{}/{}",
                f.parent()
                    .and_then(|p| p.file_name())
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                f.file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
            match crate::trace::import::import(&text, &stem, &source) {
                Ok(t) => match &self.output {
                    Some(d) => {
                        let p = d.join(format!("{stem}.trace"));
                        if let Err(e) = std::fs::write(&p, t) {
                            eprintln!("dsh-conformance import: {}: {e}", p.display());
                            code = 2;
                        }
                    }
                    None => crate::out!("{t}"),
                },
                Err(e) => {
                    eprintln!("dsh-conformance import: {}: {e}", f.display());
                    code = 2;
                }
            }
        }
        code
    }
}
