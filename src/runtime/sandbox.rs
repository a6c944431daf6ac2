//! The `sdk` profile's sandboxed bash (docs/CONTRACT.md#s13.6), sans-IO: the release's bubblewrap
//! policy, the seam a host's backend runs commands through ([`Backend`]), and how a settled run
//! is worded (the tool result text and the `job/settled` detail). The process part, detecting
//! `bwrap` and running it, is [`super::sandbox_io`].
//!
//! As the release (`@deepseek-ai/dsh-sandbox-local`, `@deepseek-ai/dsh-bash-sandbox`,
//! `@deepseek-ai/dsh-tool-bash`) does it: every call is a fresh `bash -c COMMAND`, under
//! `bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp
//! --bind W W --` (the workspace `W` and a private `/tmp` writable, the rest read-only, the
//! network shared), in the session's working directory.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The sandbox mode of the `sdk` profile's sessions.
pub const MODE: &str = "workspace-write";

/// The case-insensitive stderr text of a denied file effect under bwrap.
const DENIAL_SIGNATURE: &str = "read-only file system";

/// The stderr text of bwrap's own fatal errors (the runner failed; the command did not run).
const RUNNER_FAILURE_SIGNATURE: &str = "bwrap: ";

/// The marker a denied file effect adds (the release's `sandboxDenialMarker`).
const DENIAL_MARKER: &str = "[sandbox: file access denied under workspace-write mode]";

/// The escalation hint that rides a denial (the `sdk` profile advertises escalation).
const ESCALATION_HINT: &str = "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]";

/// The note of a run whose sandbox runner itself failed.
const RUNNER_FAILED: &str = "[sandbox: the sandbox runner itself failed under workspace-write mode — the command did not run; this is a sandbox problem, not a command failure]";

/// bwrap's profile arguments for `workspace-write` on `workspace` (before `--` and the command).
pub fn bwrap_args(workspace: &str) -> Vec<String> {
    let mut args = base_args();
    args.extend(["--tmpfs", "/tmp", "--bind", workspace, workspace].map(String::from));
    args
}

/// The release's probe of a usable bwrap: its `read-only` profile around `true` (exit 0: usable).
pub fn probe_args() -> Vec<String> {
    let mut args = base_args();
    args.extend(["--", "true"].map(String::from));
    args
}

fn base_args() -> Vec<String> {
    [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--unshare-pid",
        "--proc",
        "/proc",
        "--die-with-parent",
    ]
    .map(String::from)
    .to_vec()
}

/// One command to run confined: `bash -c command` in `cwd`, the workspace `workspace` writable.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The shell source (`bash -c`).
    pub command: &'a str,
    /// The process's working directory (the session's).
    pub cwd: &'a Path,
    /// The writable workspace root: the directory the session opened in.
    pub workspace: &'a Path,
    /// Variables set for the command, over the runtime's own environment ([`command_env`]).
    pub env: &'a [(String, String)],
}

/// The variables the release sets for a sandboxed bash command (recorded: `sandbox_bash_env`):
/// the harness home and profile, the session, and a quiet terminal.
pub fn command_env(home: &Path, profile: &str, session: &str) -> Vec<(String, String)> {
    let home = home.to_string_lossy();
    [
        ("DSH_HOME", home.to_string()),
        ("DSH_PROFILE", profile.to_owned()),
        ("DSH_PROFILE_DIR", format!("{home}/profiles/{profile}")),
        ("DSH_SESSION_ID", session.to_owned()),
        ("DSH_SHELL", "1".into()),
        ("GIT_PAGER", "cat".into()),
        ("NO_COLOR", "1".into()),
        ("PAGER", "cat".into()),
        ("TERM", "dumb".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A settled confined process: its output (decoded as UTF-8, invalid bytes as U+FFFD) and how
/// it ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ran {
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
    /// The exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal's name (`SIGKILL`) when one ended it.
    pub signal: Option<String>,
}

/// What a backend made of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confined {
    /// No sandbox backend is usable on this host: the command is refused, not run.
    Unavailable,
    /// The command ran under the sandbox.
    Ran(Ran),
    /// The process could not be started (the tool result is this error).
    Failed(String),
    /// Spawning failed with this errno name (`ENOENT`: the call's `workdir` does not exist):
    /// the release's job settles `killed` and the result is `Error: spawn bwrap ENOENT`.
    NotSpawned(String),
}

/// A confined command that was started and may still run (a foreground call's job before it
/// settles, or a background job).
pub trait Running: Send {
    /// Everything it wrote so far: stdout and stderr.
    fn output(&self) -> (Vec<u8>, Vec<u8>);
    /// Waits at most `d` for its end: `Some` once it ended (then always the same).
    fn wait(&mut self, d: Duration) -> Option<Ran>;
    /// Sends it SIGTERM and waits for its end.
    fn terminate(&mut self) -> Ran;
}

/// A command that already ran to its end (what [`Backend::start`] makes of [`Backend::run`]).
struct Done(Ran);

impl Running for Done {
    fn output(&self) -> (Vec<u8>, Vec<u8>) {
        (self.0.stdout.clone().into(), self.0.stderr.clone().into())
    }
    fn wait(&mut self, _: Duration) -> Option<Ran> {
        Some(self.0.clone())
    }
    fn terminate(&mut self) -> Ran {
        self.0.clone()
    }
}

/// The seam between the runtime core and a host's sandbox: runs one [`Request`] to its end.
pub trait Backend: Send + Sync {
    /// Runs `req` confined, or says why it did not.
    fn run(&self, req: &Request<'_>) -> Confined;

    /// Starts `req` confined without waiting for it (by default: runs it to its end).
    fn start(&self, req: &Request<'_>) -> Result<Box<dyn Running>, Confined> {
        match self.run(req) {
            Confined::Ran(r) => Ok(Box::new(Done(r))),
            other => Err(other),
        }
    }
}

/// The sandbox backend a runtime's `sdk` bash calls go through: none (every call refused, the
/// default: deterministic, no process), the host's ([`Sandbox::host`]), or any other
/// [`Backend`].
#[derive(Clone, Default)]
pub struct Sandbox(Option<Arc<dyn Backend>>);

impl Sandbox {
    /// No backend: every call is refused as on a host without one.
    pub fn none() -> Sandbox {
        Sandbox(None)
    }

    /// Commands run through `backend`.
    pub fn with(backend: Arc<dyn Backend>) -> Sandbox {
        Sandbox(Some(backend))
    }

    /// The host's backend: `bwrap` on `PATH`, probed at the first call as the release probes it.
    pub fn host() -> Sandbox {
        Sandbox::with(Arc::new(super::sandbox_io::Host::default()))
    }

    /// Whether this host has a usable backend (`bwrap` on `PATH` passes the release's probe):
    /// what [`Sandbox::host`] finds.
    pub fn host_is_usable() -> bool {
        super::sandbox_io::probe()
    }

    /// Runs `req` through the backend.
    pub fn run(&self, req: &Request<'_>) -> Confined {
        match &self.0 {
            Some(b) => b.run(req),
            None => Confined::Unavailable,
        }
    }

    /// Starts `req` through the backend, or says why it did not run.
    pub fn start(&self, req: &Request<'_>) -> Result<Box<dyn Running>, Confined> {
        match &self.0 {
            Some(b) => b.start(req),
            None => Err(Confined::Unavailable),
        }
    }
}

impl fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Sandbox(backend)"
        } else {
            "Sandbox(none)"
        })
    }
}

/// Whether a run's stderr shows a denied file effect (a nonzero exit is required).
fn denied(ran: &Ran) -> bool {
    failed(ran) && ran.stderr.to_lowercase().contains(DENIAL_SIGNATURE) && !runner_failed(ran)
}

/// Whether bwrap itself failed (a nonzero exit and one of its fatal lines on stderr).
pub fn runner_failed(ran: &Ran) -> bool {
    failed(ran)
        && ran
            .stderr
            .lines()
            .any(|l| l.to_lowercase().contains(RUNNER_FAILURE_SIGNATURE))
}

fn failed(ran: &Ran) -> bool {
    ran.exit_code.is_some_and(|c| c != 0)
}

/// Stdout, then a `[stderr]` section on a line of its own when there is stderr.
pub fn streams(stdout: &str, stderr: &str) -> String {
    let mut body = stdout.to_string();
    if !stderr.is_empty() {
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        body.push_str("[stderr]\n");
        body.push_str(stderr);
    }
    body
}

/// The tool result text of a settled run: stdout, a `[stderr]` section, `(no output)` for
/// neither, then the denial markers and `[killed by signal: S]` or `[exit code: N]`.
pub fn render(ran: &Ran) -> String {
    let mut body = streams(&ran.stdout, &ran.stderr);
    if body.is_empty() {
        body.push_str("(no output)");
    }
    let mut markers: Vec<String> = Vec::new();
    if denied(ran) {
        markers.extend([DENIAL_MARKER, ESCALATION_HINT].map(String::from));
    }
    match (&ran.signal, ran.exit_code) {
        (Some(s), _) => markers.push(format!("[killed by signal: {s}]")),
        (None, Some(c)) if c != 0 => markers.push(format!("[exit code: {c}]")),
        _ => {}
    }
    if markers.is_empty() {
        return body;
    }
    if !body.ends_with('\n') {
        body.push('\n');
    }
    body + &markers.join("\n")
}

/// The settled job's `status` and `detail`: `completed` with `exit code: N` (or `killed` with
/// `signal: S`), the sandbox notes after `; `.
pub fn outcome(ran: &Ran) -> (&'static str, String) {
    let (status, base) = match &ran.signal {
        Some(s) => ("killed", format!("signal: {s}")),
        None => (
            "completed",
            format!("exit code: {}", ran.exit_code.unwrap_or(0)),
        ),
    };
    let notes = if runner_failed(ran) {
        RUNNER_FAILED.to_string()
    } else if denied(ran) {
        format!("{DENIAL_MARKER} {ESCALATION_HINT}")
    } else {
        return (status, base);
    };
    (status, format!("{base}; {notes}"))
}

/// How a bash call's job settles and what its tool result says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// `job/settled.status`: `completed`, `killed` or `failed`.
    pub status: &'static str,
    /// `job/settled.detail`.
    pub detail: String,
    /// The tool result text.
    pub text: String,
    /// Whether the tool result is an error (only when the command did not run).
    pub is_error: bool,
    /// Whether the command ran (its result then carries `meta.cwd`).
    pub ran: bool,
}

/// What a backend's answer makes of the call.
pub fn settle(c: Confined) -> Settled {
    let refused = |detail: String| Settled {
        status: "failed",
        text: format!("Error: {detail}"),
        detail,
        is_error: true,
        ran: false,
    };
    match c {
        Confined::Unavailable => refused(super::events::SANDBOX_REFUSAL.to_string()),
        Confined::Failed(e) => refused(e),
        Confined::NotSpawned(code) => Settled {
            status: "killed",
            detail: "killed before exit".into(),
            text: format!("Error: spawn bwrap {code}"),
            is_error: true,
            ran: false,
        },
        Confined::Ran(r) => {
            let (status, detail) = outcome(&r);
            Settled {
                status,
                detail,
                text: render(&r),
                is_error: false,
                ran: true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(out: &str, err: &str, code: i32) -> Ran {
        Ran {
            stdout: out.into(),
            stderr: err.into(),
            exit_code: Some(code),
            signal: None,
        }
    }

    #[test]
    fn results_are_worded_as_the_release_words_them() {
        assert_eq!(render(&ran("hi\n", "", 0)), "hi\n");
        assert_eq!(render(&ran("", "", 0)), "(no output)");
        assert_eq!(render(&ran("out", "err\n", 0)), "out\n[stderr]\nerr\n");
        assert_eq!(
            render(&ran("out\n", "err\n", 3)),
            "out\n[stderr]\nerr\n[exit code: 3]"
        );
        assert_eq!(render(&ran("", "", 137)), "(no output)\n[exit code: 137]");
        let denied = ran(
            "",
            "touch: cannot touch '/usr/x': Read-only file system\n",
            1,
        );
        assert_eq!(
            render(&denied),
            format!("[stderr]\ntouch: cannot touch '/usr/x': Read-only file system\n{DENIAL_MARKER}\n{ESCALATION_HINT}\n[exit code: 1]")
        );
        assert_eq!(
            outcome(&denied),
            (
                "completed",
                format!("exit code: 1; {DENIAL_MARKER} {ESCALATION_HINT}")
            )
        );
        // A denial the command survived (exit 0) is no denial.
        let survived = ran(
            "still\n",
            "bash: line 1: /etc/x: Read-only file system\n",
            0,
        );
        assert_eq!(outcome(&survived), ("completed", "exit code: 0".into()));
        assert!(!render(&survived).contains("[sandbox"));
        let killed = Ran {
            signal: Some("SIGKILL".into()),
            exit_code: None,
            ..Ran::default()
        };
        assert_eq!(render(&killed), "(no output)\n[killed by signal: SIGKILL]");
        assert_eq!(outcome(&killed), ("killed", "signal: SIGKILL".into()));
    }

    #[test]
    fn a_failing_runner_is_no_denial() {
        let r = ran("", "bwrap: Can't mkdir /x: Read-only file system\n", 1);
        assert!(runner_failed(&r));
        assert_eq!(
            outcome(&r),
            ("completed", format!("exit code: 1; {RUNNER_FAILED}"))
        );
    }

    #[test]
    fn the_policy_is_the_releases() {
        assert_eq!(
            bwrap_args("/w").join(" "),
            "--ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind /w /w"
        );
        assert_eq!(probe_args().last().map(String::as_str), Some("true"));
        assert!(matches!(
            Sandbox::none().run(&Request {
                command: "true",
                cwd: Path::new("/"),
                workspace: Path::new("/"),
                env: &[],
            }),
            Confined::Unavailable
        ));
        // Recorded: `sandbox_bash_env`.
        let env = command_env(Path::new("/h"), "sdk", "s1");
        let text: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            text.join(" "),
            "DSH_HOME=/h DSH_PROFILE=sdk DSH_PROFILE_DIR=/h/profiles/sdk DSH_SESSION_ID=s1 \
             DSH_SHELL=1 GIT_PAGER=cat NO_COLOR=1 PAGER=cat TERM=dumb"
        );
    }
}
