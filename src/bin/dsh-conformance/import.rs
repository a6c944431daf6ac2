//! `dsh-conformance import`: raw stdio transcripts converted into golden traces.

use dsh_conformance::trace::import::import_file;
use std::path::PathBuf;

/// Convert raw stdio transcripts into golden traces (identity-preserving redaction).
///
/// Reads the layouts of fixtures/real-0.2.1rc2/raw/; ids, times and paths become placeholders. Each trace goes to
/// stdout, or with -o to DIR/STEM.trace (STEM: the transcript's file name without its
/// extension). Exit 0, or 2 when a transcript cannot be read or converted (the others are
/// still converted).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ImportArgs {
    /// Write each trace to DIR/STEM.trace (DIR is created when missing).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
    /// Raw transcripts (`.jsonl`).
    #[arg(value_name = "RAW", required = true)]
    files: Vec<PathBuf>,
}

impl ImportArgs {
    /// Runs the import; returns the exit code.
    pub(crate) fn run(&self) -> i32 {
        if let Some(d) = &self.output {
            if let Err(e) = std::fs::create_dir_all(d) {
                eprintln!("dsh-conformance import: {}: {e}", d.display());
                return 2;
            }
        }
        let mut code = 0;
        for f in &self.files {
            match import_file(f) {
                Ok(t) => match &self.output {
                    Some(d) => {
                        let stem = f
                            .file_stem()
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        let p = d.join(format!("{stem}.trace"));
                        if let Err(e) = std::fs::write(&p, t) {
                            eprintln!("dsh-conformance import: {}: {e}", p.display());
                            code = 2;
                        }
                    }
                    None => dsh_conformance::out!("{t}"),
                },
                Err(e) => {
                    eprintln!("dsh-conformance import: {e}");
                    code = 2;
                }
            }
        }
        code
    }
}
