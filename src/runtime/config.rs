//! Runtime configuration: protocol edition, launch profile, persistence home, process cwd, env.

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
}

impl Env {
    /// Reads the process environment. Err carries the diagnostic for an invalid value.
    pub fn from_process() -> Result<Env, String> {
        let mut env = Env::default();
        if let Ok(v) = std::env::var("DSH_MAX_TOKENS_AS_SUCCESS") {
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
        }
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
