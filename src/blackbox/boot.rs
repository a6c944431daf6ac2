//! The runtime's boot, measured once before the lanes start, so that `--processes auto` can share
//! processes between the sequences the contract isolates when a start costs more than a
//! sequence: on the reference a sequence takes ~20 ms, so a runtime paying seconds per start
//! would otherwise spend nearly all of the budget booting (issue 38, item 4).

use super::exec::{self, Deadlines, Plan, Target};
use super::gen::{initialize, End, Sequence};
use super::latency::{Latency, Wait};
use super::ProcessMode;
use crate::rules::Profile;
use std::sync::Arc;
use std::time::Duration;

/// The boot from which `auto` shares processes: ten times what a Python runtime takes to answer
/// its first `initialize` here, so that a loaded machine does not flip the mode (and with it the
/// processes a seed's sequences run on) for the runtimes that start in a blink; the release takes
/// 1.2–2.5 s.
pub const SHARE_FROM: Duration = Duration::from_secs(1);

/// The time from the start of a fresh process of `target` to its answer to `initialize` (the
/// process then ends at EOF); `None` when no answer came within `dl`.
pub fn measure(target: &Target, rules: &Profile, dl: Deadlines) -> Option<Duration> {
    let seq = Sequence {
        ops: vec![initialize()],
        end: End::Eof,
    };
    let latency = Arc::new(Latency::default());
    let plan = Plan {
        last: true,
        latency: Some(Arc::clone(&latency)),
        ..Plan::default()
    };
    exec::run_on(&mut None, &seq, target, rules, dl, None, &plan);
    latency.slowest(Wait::Answer)
}

/// `--processes auto` without a reference to compare with: shared when a boot takes
/// [`SHARE_FROM`] or more, else a fresh process per sequence (a runtime that did not answer
/// gets fresh ones: each sequence then says so itself).
pub fn auto(boot: Option<Duration>) -> ProcessMode {
    match boot {
        Some(b) if b >= SHARE_FROM => ProcessMode::Shared,
        _ => ProcessMode::Fresh,
    }
}
