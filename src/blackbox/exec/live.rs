//! One runtime process serving many sequences, one after another (the differential fuzzer's
//! answer to a runtime that takes a second to boot).
//!
//! A process is reused only where the contract isolates sequences: each [`Sequence::reusable`]
//! sequence starts with the standard `initialize` (answered once, by the process's first
//! sequence, and replayed into each later sequence's rule checker), holds no other lifecycle
//! operation, and names no session an earlier sequence on the process may have created (its
//! generated ones carry a per-case prefix, [`Plan::prefix`]). A sequence ends its process — with its own
//! `shutdown` or EOF, judged as usual — when the caller plans it as the last one
//! ([`Plan::last`]); a process that broke a rule fatally, was cut short or did not settle is
//! killed, and the next sequence starts a fresh one. A notification about an earlier sequence's
//! session during a later one (a runtime that went on after it looked settled) voids the later
//! run ([`RunResult::straggler`]): the caller runs it again on fresh processes.

use super::*;
use std::collections::BTreeSet;

/// How one sequence runs on a shared process.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Prefix of the sequence's generated session ids ([`Renderer::with_session_prefix`]).
    pub prefix: String,
    /// End the process after this sequence (with the sequence's own ending).
    pub last: bool,
    /// The runtime's observed latencies, noted and read by the run ([`Deadlines::adapt`]).
    pub latency: Option<std::sync::Arc<super::super::latency::Latency>>,
    /// End the run as soon as this class shows (shrinking asks only whether it does).
    pub until: Option<FindingClass>,
}

/// A live runtime process kept between sequences.
pub struct Live {
    child: Child,
    dirs: CaseDirs,
    /// The `initialize` request line and the line that answered it, from the first sequence.
    init: Option<(String, String)>,
    /// Session ids the sequences run so far may have created.
    created: BTreeSet<String>,
    /// The ids (as the checker keys them) of the requests the sequences run so far wrote.
    asked: BTreeSet<String>,
    /// Sequences run on it.
    runs: usize,
}

impl Live {
    /// Sequences run on it so far.
    pub fn runs(&self) -> usize {
        self.runs
    }
}

/// Runs `seq` on `live` (starting a process there when it holds none), as `plan` says: without
/// its `initialize` when the process answered one already, then ending the process when planned
/// or when it cannot serve another sequence. `live` holds the process afterwards only if it can.
pub fn run_on(
    live: &mut Option<Live>,
    seq: &Sequence,
    target: &Target,
    rules: &Profile,
    dl: Deadlines,
    stop: Option<Instant>,
    plan: &Plan,
) -> RunResult {
    let fresh = live.is_none();
    if fresh {
        match start(target) {
            Ok(l) => *live = Some(l),
            Err(broken) => {
                return RunResult {
                    broken: Some(broken),
                    ..RunResult::default()
                }
            }
        }
    }
    let Some(l) = live.as_mut() else {
        return RunResult::default();
    };
    let continued = l.runs > 0 && l.init.is_some();
    let mut st = State::new(rules, &l.dirs, stop);
    st.latency = plan.latency.clone();
    st.model = target.model.clone().map(super::activity::ModelWatch::new);
    st.until = plan.until.clone();
    if continued {
        st.foreign = l.created.clone();
        if let Some((request, answer)) = &l.init {
            st.ck.sent(request);
            st.on_line(answer);
            st.obs.frames_out -= 1;
        }
        // After the replayed answer: its own id is the process's first sequence's.
        st.foreign_ids = l.asked.clone();
    } else if let Some((_, key)) = seq.awaited_init() {
        st.watch = Some(key);
    }
    let started = Instant::now();
    let mut r = Renderer::with_session_prefix(&plan.prefix);
    let outcome = drive_ops(seq, &mut l.child, &mut st, dl, &mut r, continued);
    if !continued {
        if let (Some(answer), Some(op)) = (st.watched.take(), seq.ops.first()) {
            let mut bytes = Vec::new();
            Renderer::default().render(op, &mut bytes);
            let request = String::from_utf8_lossy(&bytes).trim_end().to_owned();
            l.init = Some((request, answer));
        }
    }
    l.runs += 1;
    l.created.extend(seq.sessions(&plan.prefix).created);
    l.asked.extend(st.obs.methods.keys().cloned());
    if st.straggler {
        // An earlier sequence's session spoke during this one: the run proves nothing.
        l.child.kill();
        *live = None;
        return RunResult {
            fresh,
            straggler: true,
            ..RunResult::default()
        };
    }
    let keep = outcome == Some(true) && !plan.last && l.init.is_some() && seq.reusable();
    if keep {
        return RunResult {
            fresh,
            ..finish(st, &mut l.child, started, false)
        };
    }
    if outcome.is_some() {
        drive_end(seq.end, &mut l.child, &mut st, dl);
    }
    l.child.kill();
    let result = finish(st, &mut l.child, started, true);
    *live = None;
    RunResult { fresh, ..result }
}

fn start(target: &Target) -> Result<Live, String> {
    let dirs = CaseDirs::new_in(&CaseDirs::fast_base(), false)
        .map_err(|e| format!("cannot create the case directories: {e}"))?;
    let child = Child::spawn(
        &target.cmd,
        &dirs,
        &target.env,
        MAX_LINE,
        &StdoutLimit::default(),
    )
    .map_err(|e| format!("cannot start `{}`: {e}", target.cmd))?;
    Ok(Live {
        child,
        dirs,
        init: None,
        created: BTreeSet::new(),
        asked: BTreeSet::new(),
        runs: 0,
    })
}

/// Whether the process that runs `seq` (after `live`'s sequences, if any) should serve `next`
/// too: both are reusable, `next` names no session the process may have created, and the process
/// has served fewer than `max_runs` sequences.
pub fn continues(
    live: Option<&Live>,
    seq: &Sequence,
    prefix: &str,
    next: &Sequence,
    next_prefix: &str,
    max_runs: usize,
) -> bool {
    if !(seq.reusable() && next.reusable()) || live.map_or(0, |l| l.runs) + 1 >= max_runs {
        return false;
    }
    let mut created = seq.sessions(prefix).created;
    if let Some(l) = live {
        created.extend(l.created.iter().cloned());
    }
    next.sessions(next_prefix).named.is_disjoint(&created)
}
