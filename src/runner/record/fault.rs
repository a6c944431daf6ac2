//! Why a recording failed ([`Fault`]) and the error that carries it with the runtime's own words
//! and what was recorded up to then ([`RecordError`]).

use super::Recording;
use crate::runner::CommandSpec;
use crate::trace::ExitInfo;
use std::time::Duration;

/// Why a recording failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The kit could not run the script: the case directories, or a send it could not resolve.
    Harness(String),
    /// The runtime could not be started (the operating system's reason).
    Spawn(String),
    /// The runtime ended (closed its stdout) before the script was done: `unsent` sends were
    /// still to be written, or the script has no `== exit` line and so expects it to keep running.
    Ended {
        /// How it ended (unknown: it closed stdout but was still running).
        exit: ExitInfo,
        /// Sends of the script not written.
        unsent: usize,
    },
    /// The runtime exited with a status the script's `== exit` line does not allow.
    WrongExit {
        /// The codes allowed (`None`: any code, so a signal was the problem).
        expected: Option<Vec<i32>>,
        /// How it ended.
        got: ExitInfo,
        /// The script has no `== exit` line: its last send, a `shutdown` request, implies
        /// `== exit 0`.
        implied: bool,
    },
    /// The script ends with `== exit` (or with a `shutdown` request, which implies
    /// `== exit 0`), but the runtime did not exit within the wait.
    NoExit {
        /// How long the recorder waited.
        waited: Duration,
        /// The exit was implied by a last `shutdown` request.
        implied: bool,
    },
    /// Requests the runtime never answered within the wait (the recorder stopped there).
    Unanswered {
        /// Their ids, as JSON text.
        ids: Vec<String>,
        /// How long the recorder waited.
        waited: Duration,
    },
    /// The runtime flooded its stdout and was killed.
    Flooded(crate::runner::Flood),
}

/// A recording that failed: why, the runtime's own words, and what was recorded up to then.
#[derive(Debug, Clone)]
pub struct RecordError {
    /// The runtime command, as shown.
    pub cmd: String,
    /// What went wrong.
    pub fault: Fault,
    /// Stdout lines the runtime wrote before it.
    pub lines: usize,
    /// The last bytes of the runtime's stderr.
    pub stderr_tail: String,
    /// Total stderr bytes.
    pub stderr_len: usize,
    /// What was recorded before the fault (none when the runtime did not start).
    pub partial: Option<Box<Recording>>,
}

impl RecordError {
    pub(super) fn new(cmd: &CommandSpec, fault: Fault) -> RecordError {
        RecordError {
            cmd: cmd.to_string(),
            fault,
            lines: 0,
            stderr_tail: String::new(),
            stderr_len: 0,
            partial: None,
        }
    }

    /// Whether the runtime could not be started at all: it did not run, or it ended without
    /// writing anything on stdout while the script needed more of it.
    pub fn cannot_start(&self) -> bool {
        match self.fault {
            Fault::Spawn(_) => true,
            Fault::Ended { .. } | Fault::WrongExit { .. } => self.lines == 0,
            _ => false,
        }
    }

    /// The CLI's exit code: 2 when the kit could not run the script or the runtime could not be
    /// started, 1 when the runtime misbehaved (a finding).
    pub fn exit_code(&self) -> i32 {
        if matches!(self.fault, Fault::Harness(_)) || self.cannot_start() {
            2
        } else {
            1
        }
    }
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cmd = &self.cmd;
        let ended = |exit: &ExitInfo| match exit {
            ExitInfo::Unknown => "closed its stdout".to_owned(),
            e => format!("ended ({e})"),
        };
        match &self.fault {
            Fault::Harness(m) => write!(f, "{m}")?,
            Fault::Spawn(e) => write!(f, "cannot start `{cmd}`: {e}")?,
            Fault::Ended { exit, unsent } if self.lines == 0 => write!(
                f,
                "`{cmd}` {} without writing anything on stdout ({unsent} send(s) of the script not written)",
                ended(exit)
            )?,
            Fault::Ended { exit, unsent: 0 } => write!(
                f,
                "`{cmd}` {} though the script has no `== exit` line (it expects the runtime to keep running)",
                ended(exit)
            )?,
            Fault::Ended { exit, unsent } => write!(
                f,
                "`{cmd}` {} before the script was done: {unsent} send(s) not written",
                ended(exit)
            )?,
            Fault::WrongExit {
                expected,
                got,
                implied,
            } => {
                let want = match expected {
                    Some(c) => c
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join("|"),
                    None => "any".to_owned(),
                };
                if *implied {
                    write!(
                        f,
                        "`{cmd}` ended with {got} after the script's last send, a `shutdown` request, \
                         which implies `== exit 0` (write an `== exit` line to allow another status)"
                    )?;
                } else {
                    write!(
                        f,
                        "`{cmd}` ended with {got}; the script expects `== exit {want}`"
                    )?;
                }
                if self.lines == 0 {
                    write!(f, " (it wrote nothing on stdout)")?;
                }
            }
            Fault::NoExit { waited, implied } => write!(
                f,
                "`{cmd}` did not exit within {:.1} s, though the script ends with {}",
                waited.as_secs_f64(),
                if *implied {
                    "a `shutdown` request (which implies `== exit 0`)"
                } else {
                    "`== exit`"
                }
            )?,
            Fault::Unanswered { ids, waited } => write!(
                f,
                "`{cmd}` never answered request(s) {} within {:.1} s (the recording stopped there)",
                ids.join(", "),
                waited.as_secs_f64()
            )?,
            Fault::Flooded(fl) => write!(f, "`{cmd}` {fl}")?,
        }
        let block = crate::runner::child::stderr_block(&self.stderr_tail, self.stderr_len, 20);
        if block.is_empty() {
            if !matches!(self.fault, Fault::Harness(_) | Fault::Spawn(_)) {
                write!(f, "\n  (the runtime wrote nothing on stderr)")?;
            }
        } else {
            write!(f, "\n{}", block.trim_end())?;
        }
        Ok(())
    }
}

impl std::error::Error for RecordError {}
