//! `dsh-conformance replay`: golden traces against a runtime, one verdict per case.

use crate::args::{duration, env_pair};
use dsh_conformance::edition::Edition;
use dsh_conformance::rules::CheckId;
use dsh_conformance::runner::record::{diff_lines, header_of, record as record_run, RecordOptions};
use dsh_conformance::runner::{replay_all, CaseReport, CommandSpec, Options, Outcome};
use dsh_conformance::suite::judge::case_failure;
use dsh_conformance::suite::stream::{self, Finding};
use dsh_conformance::trace::Trace;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The capability of a trace that needs the kit's model stub (`# requires: model-stub`): replay
/// starts the stub itself for it.
const MODEL_STUB: &str = "model-stub";

/// How long stdout is still read after a failed case, to tell whether the runtime floods.
const WATCH_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// Replay golden traces against a runtime, one verdict per case.
///
/// One PASS/FAIL/SKIP/ERROR line per case (a failure with its reason and the runtime's stderr
/// tail, and the stream rules its conversation broke), then a summary line. Exit 0 every case passed, 1 a case failed, 2 a trace could not be
/// loaded or a runtime could not be started.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReplayArgs {
    /// Only cases for this edition: current, 2026-08 or legacy.
    #[arg(long, value_name = "E", default_value = "current")]
    edition: Edition,
    /// Default deadline of each expectation (e.g. 10s); a trace's `# timeout:` wins.
    #[arg(long, value_name = "D", value_parser = duration, allow_negative_numbers = true)]
    frame_timeout: Option<Duration>,
    /// Bound on one case [default: 120s].
    #[arg(long, value_name = "D", value_parser = duration, allow_negative_numbers = true)]
    case_timeout: Option<Duration>,
    /// Longest stdout line accepted, in bytes [default: 64 MiB].
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    max_line: Option<u64>,
    /// Extra environment for the runtime (repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = env_pair)]
    env: Vec<(String, String)>,
    /// A capability the runtime has (e.g. model); cases requiring others are SKIPped (repeatable).
    #[arg(long, value_name = "CAP")]
    provides: Vec<String>,
    /// Start the scripted model stub on 127.0.0.1, pass its DEEPSEEK_* and OPENAI_* environment
    /// and provide `model` (for real runtimes). Started without it when a trace says
    /// `# requires: model-stub` (fuzz findings of a runtime fuzzed with the stub).
    #[arg(long)]
    model_stub: bool,
    /// Keep each case's temporary cwd and DSH_HOME.
    #[arg(long)]
    keep_dirs: bool,
    /// Rewrite each trace's expectations from the runtime's output, showing the diff.
    #[arg(long)]
    bless: bool,
    /// Judge only each trace's expectations, not the stream rules over its conversation (by
    /// default a case whose trace matches still FAILs when what the runtime wrote breaks one).
    #[arg(long)]
    trace_only: bool,
    /// Print each failed case's details as `check` prints a failed check's (the trace, the
    /// expected frame and its line, the frame received and its stdout line, the difference, the
    /// last frames, the stderr tail), and with --model-stub the stub's requests when a case failed.
    #[arg(long, short)]
    verbose: bool,
    /// Trace files, or directories searched for `*.trace`.
    #[arg(value_name = "TRACE_OR_DIR", required = true)]
    paths: Vec<PathBuf>,
    /// The runtime command line.
    #[arg(last = true, value_name = "CMD", required = true)]
    cmd: Vec<std::ffi::OsString>,
}

impl ReplayArgs {
    /// Runs the replay; returns the exit code.
    pub(crate) fn run(&self) -> i32 {
        let Some(cmd) = CommandSpec::from_argv(&self.cmd) else {
            eprintln!("dsh-conformance replay: empty runtime command");
            return 2;
        };
        let mut opts = self.options();
        let mut provides = self.provides.clone();
        let files = match collect_traces(&self.paths) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("dsh-conformance replay: {e}");
                return 2;
            }
        };
        // Kept alive for the whole run; dropping it stops the server.
        let stub = match self.stub(&files, &mut opts, &mut provides) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("dsh-conformance replay: {e}");
                return 2;
            }
        };
        let mut t = Tallies::default();
        let mut runnable = Vec::new();
        for f in &files {
            if let Some(trace) = self.runnable(f, &cmd, &opts, &provides, &mut t) {
                runnable.push(trace);
            }
        }
        // A fuzz finding's trace names its class; a class that is a check has its rule judged
        // over the conversation too (as `check` judges a check's own rule).
        let own: std::collections::HashMap<String, Option<CheckId>> = runnable
            .iter()
            .filter_map(|t| Some((t.file.clone(), CheckId::parse(t.meta.class.as_deref()?))))
            .collect();
        for r in replay_all(&runnable, &cmd, &opts) {
            match self.print_case(&r, own.get(&r.file).copied()) {
                Tally::Pass => t.pass += 1,
                Tally::Fail => t.fail += 1,
                Tally::Broken => t.broken += 1,
            }
        }
        if let Some(s) = stub.as_ref().filter(|_| self.verbose && t.fail > 0) {
            eprintln!("model stub log:\n{}", s.log_text());
        }
        t.exit_code(files.len())
    }

    /// The runner's options from the flags.
    fn options(&self) -> Options {
        let mut opts = Options {
            env: self.env.clone(),
            keep_dirs: self.keep_dirs,
            watch_after_failure: WATCH_AFTER_FAILURE,
            ..Options::default()
        };
        if let Some(d) = self.frame_timeout {
            opts.frame_timeout = d;
        }
        if let Some(d) = self.case_timeout {
            opts.case_timeout = d;
        }
        if let Some(n) = self.max_line {
            opts.max_line = usize::try_from(n).unwrap_or(usize::MAX);
        }
        opts
    }

    /// The model stub, started for `--model-stub`, or without asking for a trace that says
    /// `# requires: model-stub` (a fuzz finding of a runtime fuzzed with the stub); its
    /// environment goes to `opts`, and what it provides to `provides`.
    fn stub(
        &self,
        files: &[std::path::PathBuf],
        opts: &mut Options,
        provides: &mut Vec<String>,
    ) -> Result<Option<dsh_conformance::model_stub::ModelStub>, String> {
        let needs_stub = !self.model_stub
            && files.iter().any(|f| {
                Trace::load(f).is_ok_and(|t| {
                    t.applies_to(self.edition) && t.meta.requires.iter().any(|r| r == MODEL_STUB)
                })
            });
        if needs_stub {
            eprintln!(
                "dsh-conformance replay: a trace requires the model stub: starting it (as --model-stub)"
            );
        }
        if !(self.model_stub || needs_stub) {
            return Ok(None);
        }
        let s = dsh_conformance::model_stub::ModelStub::start()
            .map_err(|e| format!("cannot start the model stub: {e}"))?;
        opts.env.extend(s.env());
        provides.push("model".into());
        provides.push(MODEL_STUB.into());
        Ok(Some(s))
    }

    /// The trace in `f` when it is to be replayed; one that is not (broken, for another
    /// edition, requiring what is not provided, or blessed instead) is counted in `t` here.
    fn runnable(
        &self,
        f: &std::path::Path,
        cmd: &CommandSpec,
        opts: &Options,
        provides: &[String],
        t: &mut Tallies,
    ) -> Option<Trace> {
        let trace = match Trace::load(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("ERROR {e}");
                t.broken += 1;
                return None;
            }
        };
        if !trace.applies_to(self.edition) {
            return None;
        }
        if let Some(r) = trace.meta.requires.iter().find(|r| !provides.contains(r)) {
            dsh_conformance::outln!(
                "SKIP {} ({}): requires {r} (pass --provides {r})",
                trace.meta.case,
                f.display()
            );
            t.skip += 1;
            return None;
        }
        if !self.bless {
            return Some(trace);
        }
        match bless_one(f, &trace, cmd, opts) {
            Ok(()) => t.pass += 1,
            Err(Blessing::Runtime(e)) => {
                dsh_conformance::outln!("FAIL blessing {}:\n{e}", f.display());
                t.fail += 1;
            }
            Err(Blessing::Broken(e)) => {
                eprintln!("ERROR blessing {}: {e}", f.display());
                t.broken += 1;
            }
        }
        None
    }

    /// Prints one case's verdict, with the stream rules its conversation broke; returns how it
    /// counts (a matched trace whose conversation broke one is a failure).
    fn print_case(&self, r: &CaseReport, fuzz: Option<Option<CheckId>>) -> Tally {
        let found = self.stream_findings(r, fuzz);
        if matches!(r.outcome, Outcome::Pass) && !found.is_empty() {
            dsh_conformance::outln!(
                "FAIL {} ({}) in {:.2}s\n  the trace matched, but what the runtime wrote broke {} stream rule(s):",
                r.case,
                r.file,
                r.wall.as_secs_f64(),
                found.len()
            );
        } else if let Some(f) = self.verbose.then(|| case_failure(r)).flatten() {
            // `check`'s rendering of the failure (it has the stderr tail), indented under the
            // case's line as the default rendering is.
            dsh_conformance::outln!(
                "FAIL {} ({}) in {:.2}s",
                r.case,
                r.file,
                r.wall.as_secs_f64()
            );
            for l in f.to_string().lines() {
                dsh_conformance::outln!("  {l}");
            }
            if let Some(fl) = &r.flooded_after {
                dsh_conformance::outln!("  then the runtime {fl}");
            }
            if !found.is_empty() {
                dsh_conformance::outln!("  stream rules broken too:");
            }
        } else {
            dsh_conformance::out!("{r}");
            if !found.is_empty() {
                dsh_conformance::outln!("  stream rules broken too:");
            }
        }
        for f in &found {
            let at = f
                .stdout_line
                .map_or(String::new(), |n| format!(" (stdout line {n})"));
            dsh_conformance::outln!("    {}: {}{at}", f.check, f.message);
            if let Some(l) = &f.line {
                dsh_conformance::outln!("      {l}");
            }
        }
        match r.outcome {
            Outcome::Pass if found.is_empty() => Tally::Pass,
            Outcome::Pass | Outcome::Fail(_) => Tally::Fail,
            Outcome::Broken(_) | Outcome::Halted(_) => Tally::Broken,
        }
    }

    /// The stream rules a case's conversation broke (the judge `check` and `fuzz` use), unless
    /// `--trace-only` or the case did not run to its end.
    /// `fuzz`: `Some(own)` for a fuzz finding's trace (`# class:`, `own` its check when the class
    /// is one): judged as the fuzzer judges, its own rule included.
    fn stream_findings(&self, r: &CaseReport, fuzz: Option<Option<CheckId>>) -> Vec<Finding> {
        let complete = matches!(r.outcome, Outcome::Pass | Outcome::Fail(_));
        if self.trace_only || !complete || r.transcript.truncated {
            return Vec::new();
        }
        match fuzz {
            Some(own) => stream::judge_as_fuzzed(&r.transcript, own, self.edition, false),
            None => stream::judge(&r.transcript, None, self.edition, false),
        }
    }
}

/// How a replayed case counts in the summary line.
enum Tally {
    Pass,
    Fail,
    Broken,
}

/// Why a trace was not blessed.
enum Blessing {
    /// The runtime misbehaved while recording (a finding: exit 1).
    Runtime(String),
    /// The trace, the file or the runtime's start failed (exit 2).
    Broken(String),
}

fn bless_one(
    path: &Path,
    trace: &Trace,
    cmd: &CommandSpec,
    opts: &Options,
) -> Result<(), Blessing> {
    let old = std::fs::read_to_string(path).map_err(|e| Blessing::Broken(e.to_string()))?;
    // A trace the runtime passes is left as written: re-recording it would turn its patterns
    // (`{{-32601|-32603}}`, `{{any}}`, captures) into this run's literals, and the blessed trace
    // could then fail a runtime the original passed.
    if matches!(
        dsh_conformance::replay(trace, cmd, opts).outcome,
        Outcome::Pass
    ) {
        dsh_conformance::outln!("BLESS {}: passes, left as written", path.display());
        return Ok(());
    }
    let ro = RecordOptions {
        env: opts.env.clone(),
        max_line: opts.max_line,
        ..RecordOptions::default()
    };
    let rec = record_run(trace, cmd, &ro).map_err(|e| match e.exit_code() {
        1 => Blessing::Runtime(e.to_string()),
        _ => Blessing::Broken(e.to_string()),
    })?;
    let new = rec.to_trace(&trace.meta.case, "", Some(header_of(&old)));
    let d = diff_lines(&old, &new);
    if d.is_empty() {
        dsh_conformance::outln!("BLESS {}: unchanged", path.display());
        return Ok(());
    }
    dsh_conformance::outln!("BLESS {}:\n{d}", path.display());
    std::fs::write(path, new).map_err(|e| Blessing::Broken(e.to_string()))
}

/// Collects `.trace` files from files and directories (sorted within each directory).
fn collect_traces(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.to_path_buf()];
            let mut found = Vec::new();
            while let Some(d) = stack.pop() {
                let rd = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                for e in rd.flatten() {
                    let q = e.path();
                    if q.is_dir() {
                        stack.push(q);
                    } else if q.extension().is_some_and(|x| x == "trace") {
                        found.push(q);
                    }
                }
            }
            found.sort();
            out.extend(found);
        } else if p.is_file() {
            out.push(p.to_path_buf());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

/// How many traces passed, failed, were skipped or could not be run.
#[derive(Debug, Default)]
struct Tallies {
    pass: usize,
    fail: usize,
    skip: usize,
    broken: usize,
}

impl Tallies {
    /// Prints the tally line; the exit code: 2 with errors, 1 with failures, `NOTHING_TESTED`
    /// when nothing passed, else 0 (`files`: how many trace files were found).
    fn exit_code(&self, files: usize) -> i32 {
        let Tallies {
            pass,
            fail,
            skip,
            broken,
        } = *self;
        dsh_conformance::outln!("{pass} passed, {fail} failed, {skip} skipped, {broken} errors");
        if broken > 0 {
            2
        } else if fail > 0 {
            1
        } else if pass == 0 {
            eprintln!(
                "dsh-conformance replay: nothing was tested ({files} trace file(s), {skip} skipped)"
            );
            dsh_conformance::suite::report::NOTHING_TESTED
        } else {
            0
        }
    }
}
