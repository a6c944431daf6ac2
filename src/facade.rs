//! The library's entry point for a runtime author's tests: [`check`] with [`CheckOptions`],
//! built by methods so that a new option never breaks a caller. The defaults are the command
//! line's (`dsh-conformance check`): edition current, 10 s per expected frame, a 300 s budget,
//! as many jobs as CPUs (at most 8), SHOULD failures reported but not failing.

use crate::edition::Edition;
use crate::model_stub::ModelStub;
use crate::runner::{Cancel, CommandSpec};
use crate::suite::plan::Budget;
use crate::suite::run::{self, Options, StubLog, DEFAULT_BUDGET};
use crate::suite::{Baseline, Report};
use std::sync::Arc;
use std::time::Duration;

/// How [`check`] runs the suite.
///
/// ```
/// use dsh_conformance::{CheckOptions, Edition};
/// use std::time::Duration;
/// let opts = CheckOptions::new()
///     .jobs(2)
///     .edition(Edition::Current)
///     .filter("frame.*")
///     .skip("frame.large-line")
///     .frame_timeout(Duration::from_secs(5));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckOptions {
    inner: Options,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions::new()
    }
}

impl CheckOptions {
    /// The command line's defaults.
    pub fn new() -> CheckOptions {
        CheckOptions {
            inner: Options {
                budget: Budget::PlusBoots(DEFAULT_BUDGET),
                jobs: std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
                ..Options::default()
            },
        }
    }

    /// The protocol edition to check (default: current).
    pub fn edition(mut self, e: Edition) -> Self {
        self.inner.edition = e;
        self
    }

    /// Also run the checks whose id matches `pattern` (a substring, or a glob with `*`); with
    /// no filter every check runs. Prerequisites left out are assumed to hold.
    pub fn filter(mut self, pattern: &str) -> Self {
        self.inner.select.filters.push(pattern.to_owned());
        self
    }

    /// Leave out the checks whose id matches `pattern`, even when a filter selects them.
    pub fn skip(mut self, pattern: &str) -> Self {
        self.inner.select.skips.push(pattern.to_owned());
        self
    }

    /// Demand upstream's bytes where clients do not care (`--strict-upstream`).
    pub fn strict_upstream(mut self, on: bool) -> Self {
        self.inner.strict_upstream = on;
        self
    }

    /// How long to wait for each expected frame (default 10 s); every trace deadline scales.
    pub fn frame_timeout(mut self, d: Duration) -> Self {
        self.inner.frame_timeout = d;
        self
    }

    /// How long the runtime may take to answer its first `initialize` (default 30 s).
    pub fn start_timeout(mut self, d: Duration) -> Self {
        self.inner.start_timeout = d;
        self
    }

    /// How long the whole run may take, exactly (`None`: no bound; default 300 s plus the
    /// least time the runtime's boots take, as the command line's). When spent, the report
    /// holds the checks decided so far and [`Report::is_success`] is false.
    pub fn budget(mut self, d: Option<Duration>) -> Self {
        self.inner.budget = d.map_or(Budget::None, Budget::Fixed);
        self
    }

    /// Checks run at once, each against its own runtime process (1–64; default: the CPUs, at
    /// most 8).
    pub fn jobs(mut self, n: usize) -> Self {
        self.inner.jobs = n.clamp(1, 64);
        self
    }

    /// An environment variable for the runtime.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.inner.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Point the runtime at `stub` (its `DEEPSEEK_*` environment); failures quote its requests.
    pub fn model_stub(mut self, stub: Arc<ModelStub>) -> Self {
        self.inner.env.extend(stub.env());
        self.inner.model_stub = Some(StubLog::of(stub));
        self
    }

    /// Known failures (`--known-failing`): listed failures are XFAIL, listed passes fail.
    pub fn known_failing(mut self, baseline: Baseline) -> Self {
        self.inner.baseline = baseline;
        self
    }

    /// Whether SHOULD failures fail the run too (`--should-fail`; default false).
    pub fn should_fail(mut self, on: bool) -> Self {
        self.inner.should_fail = on;
        self
    }

    /// The run's stop switch: [`Cancel::halt`] on it from another thread stops the run early.
    pub fn cancel(mut self, cancel: Cancel) -> Self {
        self.inner.cancel = cancel;
        self
    }

    /// Progress lines on stderr, one per finished check (default off).
    pub fn progress(mut self, on: bool) -> Self {
        self.inner.progress = on;
        self
    }

    /// The suite's own options, for the kit's binaries and tests.
    #[doc(hidden)]
    pub fn into_inner(self) -> Options {
        self.inner
    }
}

/// Runs the conformance suite against the runtime `cmd` (`label` names it in the report). A
/// runtime that cannot be checked still gives a report ([`Report::stopped`]); `Err` is for the
/// kit's own problems, such as a filter that selects no check.
///
/// ```no_run
/// use dsh_conformance::{check, CheckOptions, CommandSpec};
/// let cmd = CommandSpec::new("target/debug/my-runtime").arg("--profile").arg("sdk");
/// check(&cmd, "my runtime", &CheckOptions::new().jobs(2)).expect("the kit runs").assert_conforms();
/// ```
pub fn check(cmd: &CommandSpec, label: &str, opts: &CheckOptions) -> Result<Report, run::RunError> {
    run::run(cmd, label, &opts.inner)
}
