//! `dsh-conformance record`: a script's sends against a runtime, written as a trace.

use crate::args::{duration, env_pair};
use dsh_conformance::runner::record::{
    record as record_run, RecordError, RecordOptions, Recording,
};
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::trace::import::RawEvent;
use dsh_conformance::trace::Trace;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Run a script of sends against a runtime and write the trace of what it answered.
///
/// Identity-preserving redaction: ids, times and paths become placeholders.
///
/// The recording fails (exit 1, the reason and the runtime's stderr tail on stderr) when the
/// runtime ends before the script is done, exits with a status the script's `== exit` line does
/// not allow (or not at all), leaves a request unanswered for --max-wait, or floods its stdout;
/// exit 2 when it cannot be started (or ends without writing anything). A script whose last send
/// is a `shutdown` request and that has no `== exit` line expects `== exit 0` (the contract's
/// §3.6). A failed recording is never written to the output: with -o FILE what was recorded is
/// kept as FILE.partial, marked incomplete; a later recording to FILE that succeeds removes it.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RecordArgs {
    /// The script: a trace whose sends are written in order (its expectations only pace the
    /// sends; its `== exit` line is the exit the runtime must make).
    #[arg(long, value_name = "FILE", required = true)]
    script: PathBuf,
    /// Write the trace to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Quiet time after which the next sends go out.
    #[arg(long, value_name = "D", value_parser = duration, default_value = "500ms", allow_negative_numbers = true)]
    settle: Duration,
    /// Longest wait for the answers to the requests sent so far; one still unanswered then fails
    /// the recording.
    #[arg(long, value_name = "D", value_parser = duration, default_value = "30s", allow_negative_numbers = true)]
    max_wait: Duration,
    /// Longest wait for the exit the script's `== exit` line expects.
    #[arg(long, value_name = "D", value_parser = duration, default_value = "15s", allow_negative_numbers = true)]
    exit_wait: Duration,
    /// Extra environment for the runtime (repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = env_pair)]
    env: Vec<(String, String)>,
    /// The runtime command line.
    #[arg(last = true, value_name = "CMD", required = true)]
    cmd: Vec<std::ffi::OsString>,
}

impl RecordArgs {
    /// Runs the recording; returns the exit code.
    pub(crate) fn run(&self) -> i32 {
        let Some(cmd) = CommandSpec::from_argv(&self.cmd) else {
            eprintln!("dsh-conformance record: empty runtime command");
            return 2;
        };
        let trace = match Trace::load(&self.script) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("dsh-conformance record: {e}");
                return 2;
            }
        };
        let ro = RecordOptions {
            settle: self.settle,
            max_wait: self.max_wait,
            exit_wait: self.exit_wait,
            env: self.env.clone(),
            ..RecordOptions::default()
        };
        let source = format!("recorded from `{cmd}`");
        match record_run(&trace, &cmd, &ro) {
            Ok(rec) => {
                let text = rec.to_trace(&trace.meta.case, &source, None);
                match &self.output {
                    Some(o) => {
                        if let Err(e) = std::fs::write(o, text) {
                            eprintln!("dsh-conformance record: {}: {e}", o.display());
                            return 2;
                        }
                        // A FILE.partial left by an earlier failed recording is not this one's.
                        let p = partial_path(o);
                        match std::fs::remove_file(&p) {
                            Ok(()) => eprintln!(
                                "dsh-conformance record: removed {} (left by an earlier failed recording)",
                                p.display()
                            ),
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                            Err(e) => eprintln!(
                                "dsh-conformance record: warning: cannot remove the stale {}: {e}",
                                p.display()
                            ),
                        }
                    }
                    None => dsh_conformance::out!("{text}"),
                }
                0
            }
            Err(mut e) => {
                eprintln!("dsh-conformance record: FAILED: {e}");
                match (&self.output, e.partial.take()) {
                    (Some(o), Some(rec)) => match write_partial(o, &trace, &source, &e, *rec) {
                        Ok(p) => eprintln!(
                            "dsh-conformance record: nothing written to {}; what was recorded is in {} (incomplete)",
                            o.display(),
                            p.display()
                        ),
                        Err(why) => eprintln!("dsh-conformance record: {why}"),
                    },
                    (None, Some(_)) => eprintln!(
                        "dsh-conformance record: no trace written (with -o FILE what was recorded is kept as FILE.partial)"
                    ),
                    (_, None) => {}
                }
                e.exit_code()
            }
        }
    }
}

/// Stdout lines a partial recording keeps (a flood is not worth a trace of its every line).
const PARTIAL_LINES: usize = 1000;

/// `FILE.partial` for `FILE`.
fn partial_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// Writes what a failed recording captured to `FILE.partial`, headed by why it is incomplete.
fn write_partial(
    out: &Path,
    trace: &Trace,
    source: &str,
    e: &RecordError,
    mut rec: Recording,
) -> Result<PathBuf, String> {
    let mut text = String::from("# INCOMPLETE RECORDING: not a golden trace\n");
    for l in e.to_string().lines() {
        text.push_str("# incomplete: ");
        text.push_str(l.trim_start());
        text.push('\n');
    }
    let out_lines = |r: &Recording| {
        (r.events.iter())
            .filter(|e| matches!(e, RawEvent::Out { .. }))
            .count()
    };
    let total = out_lines(&rec);
    if total > PARTIAL_LINES {
        let mut seen = 0;
        rec.events.retain(|e| {
            seen += usize::from(matches!(e, RawEvent::Out { .. }));
            seen <= PARTIAL_LINES || !matches!(e, RawEvent::Out { .. })
        });
        text.push_str(&format!(
            "# incomplete: only the first {PARTIAL_LINES} of {total} stdout lines are kept\n"
        ));
    }
    text.push_str(&rec.to_trace(&trace.meta.case, source, None));
    let p = partial_path(out);
    std::fs::write(&p, text).map_err(|err| format!("{}: {err}", p.display()))?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_file_sits_beside_the_output() {
        assert_eq!(
            partial_path(Path::new("dir/out.trace")),
            PathBuf::from("dir/out.trace.partial")
        );
    }
}
