//! Runtime configuration: protocol edition, launch profile, persistence home, process cwd, env,
//! the rows patch layers turned off, and the timing mode. [`super::launch`] builds it from argv.

use std::collections::BTreeSet;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

pub use crate::edition::Edition;

/// The `--profile` the runtime was launched with (the official SDK passes `sdk`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// `--profile sdk`: `maxTokensAsSuccess` defaults to true.
    #[default]
    Sdk,
    /// `--profile sdk-minimal`: `maxTokensAsSuccess` defaults to false.
    SdkMinimal,
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sdk" => Ok(Profile::Sdk),
            "sdk-minimal" => Ok(Profile::SdkMinimal),
            _ => Err(format!(
                "unknown profile {s:?} (expected sdk or sdk-minimal)"
            )),
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Profile::Sdk => "sdk",
            Profile::SdkMinimal => "sdk-minimal",
        })
    }
}

/// The model-relevant environment (read once at start).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    /// `DSH_MAX_TOKENS_AS_SUCCESS` (JSON boolean); `None` = the profile's default.
    pub max_tokens_as_success: Option<bool>,
    /// `DSH_SYSTEM_PROMPT`: the `sdk-minimal` system prompt (set and empty: no text at all).
    pub system_prompt: Option<String>,
}

impl Env {
    /// Reads the process environment. Err carries the diagnostic for an invalid value.
    pub fn from_process() -> Result<Env, String> {
        Env::from_lookup(&|k| std::env::var(k).ok())
    }

    /// Reads the variables through `lookup` (the process environment, or a test's).
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Env, String> {
        let mut env = Env {
            system_prompt: lookup("DSH_SYSTEM_PROMPT"),
            ..Env::default()
        };
        if let Some(v) = lookup("DSH_MAX_TOKENS_AS_SUCCESS") {
            env.max_tokens_as_success = match v.trim() {
                "" => None,
                "true" => Some(true),
                "false" => Some(false),
                other => {
                    return Err(format!(
                        "plugin tree failed to load: DSH_MAX_TOKENS_AS_SUCCESS must be a JSON boolean, got {other:?}"
                    ))
                }
            };
        }
        Ok(env)
    }
}

impl Config {
    /// The release's harness home: `DSH_HOME` when set, else `~/.dsh` (what a sandboxed command
    /// is told, [`super::sandbox::command_env`]).
    pub fn harness_home(&self) -> PathBuf {
        self.home.clone().unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_else(|| "/".into());
            PathBuf::from(home).join(".dsh")
        })
    }
}

/// Everything a [`super::Runtime`] needs to know about its launch.
#[derive(Debug, Clone)]
pub struct Config {
    /// Protocol edition.
    pub edition: Edition,
    /// Launch profile.
    pub profile: Profile,
    /// `DSH_HOME`: where sessions persist; `None` = memory only.
    pub home: Option<PathBuf>,
    /// The process working directory (relative `cwd`s resolve against it).
    pub process_cwd: PathBuf,
    /// Model-relevant environment.
    pub env: Env,
    /// Profile rows the patch layers disabled (by id).
    pub disabled_rows: BTreeSet<String>,
    /// Tools that rows inserted by patch layers offer (`sdk-minimal`; see [`super::editor`]).
    pub extra_tools: Vec<String>,
    /// `--realistic-timing`: wait the release's boot latency and model retry back-off
    /// ([`Timing`]); off, everything settles at once.
    pub realistic_timing: bool,
    /// A turn whose session's working directory does not exist (any more) fails before its
    /// first step, as the release's do (on by default). In-memory tests that make up directory
    /// names turn it off.
    pub cwd_must_exist: bool,
    /// Where the `sdk` profile's bash runs ([`super::sandbox`]): none by default (every call
    /// refused, as on a host without a backend); the stdio runtime uses the host's.
    pub sandbox: super::sandbox::Sandbox,
    /// What runs `sdk-minimal`'s bash (`--shell`): a real bash by default.
    pub shell: super::shell::ShellMode,
}

/// The release's timings that `--realistic-timing` reproduces (measured with 0.2.1rc2 and the
/// model stub on a 2-core machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing;

impl Timing {
    /// Process start to the `initialize` answer: ≈ 0.9 s for `sdk`, ≈ 0.4 s for `sdk-minimal`.
    pub fn boot_ms(profile: Profile) -> u64 {
        match profile {
            Profile::Sdk => 900,
            Profile::SdkMinimal => 400,
        }
    }
}

impl Config {
    /// Defaults: current edition, `sdk` profile, no persistence, cwd `/`.
    pub fn new(edition: Edition) -> Config {
        Config {
            edition,
            profile: Profile::Sdk,
            home: None,
            process_cwd: PathBuf::from("/"),
            env: Env::default(),
            disabled_rows: BTreeSet::new(),
            extra_tools: Vec::new(),
            realistic_timing: false,
            cwd_must_exist: true,
            sandbox: super::sandbox::Sandbox::none(),
            shell: super::shell::ShellMode::default(),
        }
    }

    /// Whether the profile row `id` is on (patch layers did not disable it).
    pub fn row_enabled(&self, id: &str) -> bool {
        !self.disabled_rows.contains(id)
    }

    /// Whether `max-tokens` counts as success for `subagent.finished` / `session.finished`.
    pub fn max_tokens_as_success(&self) -> bool {
        self.env
            .max_tokens_as_success
            .unwrap_or(self.profile == Profile::Sdk)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new(Edition::Current)
    }
}
