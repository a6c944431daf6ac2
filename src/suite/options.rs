//! How to run the suite ([`Options`]), the model stub's request log the options carry, and why a
//! run cannot start ([`RunError`]): what [`super::run`] and the modules it drives (preflight,
//! judge, schedule) all read.

use super::plan::Budget;
use super::select::Selection;
use super::Baseline;
use crate::edition::Edition;
use crate::runner::{self, Cancel, StdoutLimit};
use std::time::Duration;

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Options {
    /// The edition checked.
    pub edition: Edition,
    /// Which checks run (`--filter`, `--skip`). Prerequisites left out are assumed to hold.
    pub select: Selection,
    /// Demand upstream's bytes: -32603 for unknown methods (no -32601), upstream's member order.
    pub strict_upstream: bool,
    /// Default deadline per expected frame.
    pub frame_timeout: Duration,
    /// Deadline for the runtime's first answer (preflight).
    pub start_timeout: Duration,
    /// Checks run at once, each against its own process.
    pub jobs: usize,
    /// Extra environment for the runtime (e.g. the model stub's).
    pub env: Vec<(String, String)>,
    /// Known failures.
    pub baseline: Baseline,
    /// Print progress to stderr.
    pub progress: bool,
    /// The model stub the runtime talks to, if any: failures quote its requests.
    pub model_stub: Option<StubLog>,
    /// Bound on the whole run's wall time: when it is spent, the run stops and the report holds
    /// the checks decided so far (the rest `NOT RUN`). [`Budget::PlusBoots`] grows by the time
    /// the runtime's boots take ([`super::plan`]).
    pub budget: Budget,
    /// The run's stop switch (for signals): set it to stop the run early with a partial report.
    pub cancel: Cancel,
    /// Bounds on what the runtime writes on stdout; each run starts with fresh counters.
    pub stdout: StdoutLimit,
    /// SHOULD failures fail the run too ([`Report::should_fail`](super::Report::should_fail)).
    pub should_fail: bool,
    /// Runtime processes each worker starts ahead of its next cases, so that a slow boot overlaps
    /// the cases before (each case still gets a fresh process of its own); 0: each case starts
    /// its own as it begins. `None`: from the preflight's boot time.
    pub prespawn: Option<usize>,
    /// Whether cases share warm runtime processes ([`super::share`]): `Auto` from the
    /// preflight's boot.
    pub processes: super::share::Processes,
    /// Called once the plan is made, before any check runs (the command line prints it, and
    /// warns when the boots alone exceed the budget).
    pub on_plan: Option<fn(&super::plan::Plan)>,
}

/// The default whole-run budget of the command line, for judging: it grows by the boots
/// ([`Budget::PlusBoots`]).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(300);

/// Why the suite could not run at all: a problem of the kit or of its arguments, not of the
/// runtime (a runtime that cannot be checked still gets a report:
/// [`Report::stopped`](super::Report::stopped)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// `--filter` and `--skip` select no check.
    NoMatch {
        /// The selection, as flags.
        selection: String,
    },
    /// The kit's own check traces are broken.
    Fixtures(super::cases::CaseError),
    /// The kit's own preflight trace is broken.
    Preflight(crate::trace::ParseError),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NoMatch { selection } => write!(f, "no check is selected by {selection}"),
            RunError::Fixtures(e) => write!(f, "the kit's check traces are broken: {e}"),
            RunError::Preflight(e) => write!(f, "the kit's preflight trace is broken: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// One request the model stub received, as the suite needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubRequest {
    /// One line for failure messages ([`crate::model_stub::RequestRecord::summary`]).
    pub summary: String,
    /// HTTP method.
    pub method: String,
    /// Request target.
    pub path: String,
    /// The status answered, once sent.
    pub status: Option<u16>,
    /// The tag of the key it was sent with: the case whose runtime process sent it
    /// ([`StubLog::tag_env`]).
    pub tag: Option<String>,
    /// The directive it carried ([`crate::model_stub::RequestRecord::directive`]: `reply`,
    /// `subagent`, `slow:2+reply` …), when the stub could read the request.
    pub directive: Option<String>,
    /// The tools the request offered its model, when the stub could read the request.
    pub tools: Option<Vec<String>>,
}

/// Access to the model stub's request log (in arrival order).
#[derive(Clone)]
pub struct StubLog(pub std::sync::Arc<dyn Fn() -> Vec<StubRequest> + Send + Sync>);

impl StubLog {
    /// The log of a running stub.
    pub fn of(stub: std::sync::Arc<crate::model_stub::ModelStub>) -> StubLog {
        StubLog(std::sync::Arc::new(move || {
            let key = stub.api_key();
            stub.requests()
                .iter()
                .map(|r| StubRequest {
                    summary: r.summary(),
                    method: r.method.clone(),
                    path: r.path.clone(),
                    status: r.status,
                    tag: r.tag(key).map(str::to_owned),
                    directive: r.directive.clone(),
                    tools: r.facts.as_ref().map(|f| f.tool_names.clone()),
                })
                .collect()
        }))
    }

    /// Gives the runtime of one case a key of its own: every `*_API_KEY` of `env` (the stub's
    /// keys) tagged with `tag`, so that the requests of that process alone are
    /// [`StubLog::tagged`] `tag`, whatever other cases run meanwhile.
    pub fn tag_env(env: &mut [(String, String)], tag: &str) {
        for (name, value) in env.iter_mut() {
            if name.ends_with("_API_KEY") {
                *value = crate::model_stub::tagged_key(value, tag);
            }
        }
    }

    /// The requests sent with a key tagged `tag` ([`StubLog::tag_env`]).
    pub fn tagged(&self, tag: &str) -> Vec<StubRequest> {
        let mut all = self.requests();
        all.retain(|r| r.tag.as_deref() == Some(tag));
        all
    }

    /// A tag no other case of this process has.
    pub fn new_tag(what: &str) -> String {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{what}{n}")
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<StubRequest> {
        (self.0)()
    }

    /// Every request line so far.
    pub fn lines(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.summary).collect()
    }
}

impl std::fmt::Debug for StubLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StubLog")
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            edition: Edition::Current,
            select: Selection::default(),
            strict_upstream: false,
            frame_timeout: Duration::from_secs(10),
            start_timeout: Duration::from_secs(30),
            jobs: 1,
            env: Vec::new(),
            baseline: Baseline::default(),
            progress: false,
            model_stub: None,
            budget: Budget::None,
            cancel: Cancel::new(),
            stdout: StdoutLimit::default(),
            should_fail: false,
            prespawn: None,
            processes: super::share::Processes::default(),
            on_plan: None,
        }
    }
}

/// The runner settings of the suite: tolerant matching, the suite's deadlines and environment.
pub fn runner_opts(opts: &Options) -> runner::Options {
    runner::Options {
        frame_timeout: opts.frame_timeout,
        case_timeout: Duration::from_secs(300),
        env: opts.env.clone(),
        tolerant: true,
        stdout: opts.stdout.clone(),
        cancel: opts.cancel.clone(),
        // Every further case would flood too (and the run's memory bound is shared), so the
        // first flood stops the run the moment a runner sees it: a case that floods alongside
        // it, or after the run stopped for another reason, ends halted, not a second root cause.
        flood_halts_run: true,
        ..runner::Options::default()
    }
}
