//! The I/O loop of one case ([`drive`]): the matcher's actions written to the runtime, its
//! stdout's lines fed to the matcher, its exit and the end of its stdout noticed, until the
//! matcher is done, the runtime floods, the run is stopped or the frames awaited will not come.

use super::{Cancel, Child, Event, Flood, GiveUp, Halt, Options, Transcript};
use crate::trace::matcher::{Action, ExitInfo, Matcher};
use std::time::{Duration, Instant};

/// Reads stdout, discarding it, for at most `max` and until it is quiet for 200 ms or closes:
/// whether the runtime floods.
pub(super) fn watch_for_flood(child: &mut Child, max: Duration) -> Option<Flood> {
    let until = Instant::now() + max;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match child
            .events
            .recv_timeout(left.min(Duration::from_millis(200)))
        {
            Ok(Event::Flooded(f)) => return Some(f),
            Ok(Event::Closed(_)) | Err(_) => return None,
            Ok(ev) => child.consumed(&ev),
        }
    }
    None
}

/// How long a frame reported missing may still arrive to be reported late instead.
const LATE_GRACE: Duration = Duration::from_millis(300);

/// After a "never arrived before" failure, reads on for [`LATE_GRACE`] so the report can say
/// whether the frame was late (out of order) or missing.
fn late_grace(m: &mut Matcher, child: &mut Child, started: Instant, log: &mut Transcript) {
    let until = Instant::now() + LATE_GRACE;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match child.events.recv_timeout(left) {
            Ok(ev) => {
                child.consumed(&ev);
                if let Event::Line(o) = ev {
                    let done = m.on_late_output(&o);
                    log.read(o, started.elapsed());
                    if done {
                        return;
                    }
                }
            }
            Err(_) => return,
        }
    }
}

/// With [`Options::flood_halts_run`], a flood halts the run at once, before this case's runtime
/// is killed and its stderr drained: a case that floods later (killed in its first moments, by
/// the shared bound, its stderr still unwritten) is not mistaken for the first.
pub(super) fn first_flood(end: End, opts: &Options) -> End {
    match end {
        End::Flooded(_) if opts.flood_halts_run && !opts.cancel.halt(Halt::Flooded) => {
            End::Halted(opts.cancel.halted().unwrap_or(Halt::Flooded))
        }
        end => end,
    }
}

/// How the I/O loop ended.
pub(super) enum End {
    /// The matcher is done (passed or failed).
    Done,
    /// The runtime flooded its stdout and was killed.
    Flooded(Flood),
    /// The run was stopped.
    Halted(Halt),
    /// The give-up rule saw that the frames awaited will not come: why.
    GaveUp(String),
}

/// Runs the I/O loop until the matcher is done, the runtime floods its stdout, or the run is
/// stopped.
pub(super) fn drive(
    m: &mut Matcher,
    child: &mut Child,
    started: Instant,
    log: &mut Transcript,
    cancel: &Cancel,
    give_up: Option<&GiveUp>,
) -> End {
    let mut stdout_closed = false;
    let mut exit_seen: Option<(ExitInfo, Instant)> = None;
    // Why the awaited frames will not come, seen on the last line: acted on once the matcher
    // has taken that line (a line that completes the case is a pass, whatever it shows).
    let mut gave_up: Option<String> = None;
    loop {
        let now = started.elapsed();
        match m.poll(now) {
            Action::Done => {
                if m.wants_late_lines() {
                    late_grace(m, child, started, log);
                }
                return End::Done;
            }
            _ if gave_up.is_some() => return End::GaveUp(gave_up.unwrap_or_default()),
            Action::Write(b) => {
                log.wrote(&b, now);
                child.write(b)
            }
            Action::CloseStdin => child.close_stdin(),
            Action::Signal(s) => child.signal(s),
            Action::WaitUntil(t) => {
                if let Some(h) = cancel.halted() {
                    return End::Halted(h);
                }
                // Poll the exit status at a short interval: a process can end while a
                // grandchild still holds stdout open.
                let wait = t.saturating_sub(now).min(Duration::from_millis(50))
                    + Duration::from_micros(200);
                if stdout_closed {
                    std::thread::sleep(wait.min(Duration::from_millis(10)));
                } else {
                    match child.events.recv_timeout(wait) {
                        Ok(ev) => {
                            child.consumed(&ev);
                            let now = started.elapsed();
                            match ev {
                                Event::Line(o) => {
                                    gave_up = give_up.and_then(|g| (g.0)(&o));
                                    m.on_output(&o, now);
                                    log.read(o, now);
                                }
                                Event::Flooded(f) => return End::Flooded(f),
                                Event::Closed(_) => {
                                    stdout_closed = true;
                                    // Give the process a moment to finish so the report has its status.
                                    let until = Instant::now() + Duration::from_secs(2);
                                    let mut st = child.try_exit();
                                    while st.is_none()
                                        && Instant::now() < until
                                        && !m.awaiting_exit()
                                    {
                                        std::thread::sleep(Duration::from_millis(5));
                                        st = child.try_exit();
                                    }
                                    m.on_stdout_closed(
                                        st.unwrap_or(ExitInfo::Unknown),
                                        started.elapsed(),
                                    );
                                    if let Some(st) = st {
                                        exit_seen = Some((st, Instant::now()));
                                    }
                                }
                            }
                            continue;
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                            stdout_closed = true
                        }
                    }
                }
                if exit_seen.is_none() {
                    if let Some(st) = child.try_exit() {
                        exit_seen = Some((st, Instant::now()));
                        if stdout_closed {
                            m.on_exit(st, started.elapsed());
                        }
                    }
                } else if let Some((st, at)) = exit_seen {
                    // Exited but stdout still open (held elsewhere): judge after a short drain.
                    if !stdout_closed && at.elapsed() > Duration::from_secs(1) {
                        m.on_exit(st, started.elapsed());
                        exit_seen = Some((st, Instant::now() + Duration::from_secs(3600)));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flood() -> End {
        End::Flooded(Flood {
            lines: 1,
            bytes: 214,
            after: Duration::from_millis(100),
            scope: super::super::FloodScope::Run,
        })
    }

    #[test]
    fn with_flood_halts_run_only_the_first_flood_stays_a_flood() {
        let opts = Options {
            flood_halts_run: true,
            ..Options::default()
        };
        assert!(matches!(first_flood(flood(), &opts), End::Flooded(_)));
        assert_eq!(opts.cancel.halted(), Some(Halt::Flooded));
        assert!(matches!(
            first_flood(flood(), &opts),
            End::Halted(Halt::Flooded)
        ));
        assert!(matches!(first_flood(End::Done, &opts), End::Done));
        // Off (other commands): every flood is its case's own, and nothing is halted.
        let off = Options::default();
        assert!(matches!(first_flood(flood(), &off), End::Flooded(_)));
        assert!(matches!(first_flood(flood(), &off), End::Flooded(_)));
        assert_eq!(off.cancel.halted(), None);
    }
}
