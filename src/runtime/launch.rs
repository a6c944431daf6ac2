//! From a command line to a [`Config`] (docs/CONTRACT.md#s13.6), as the 0.2.1rc2 release
//! launches: the profile (shipped `sdk` / `sdk-minimal`, or a user profile under
//! `$DSH_HOME/profiles/<name>/`), its patch layers, `--patch` overlays, the environment, and the
//! startup diagnostics the release writes to stderr.
//!
//! Failures before `initialize` exit 1 with the release's message after `Error: ` (its crash
//! report; the JavaScript stack it prints below is left out). Rows that do not activate
//! ([`activation`]) are a warning, and the runtime serves, unless a required one is among them:
//! then startup fails (exit 1). A patch that disables `sdk-jsonrpc-server` leaves nothing to
//! serve stdio: the release exits 0 at boot without reading a line, and so does the reference.

use super::activation;
use super::config::{Config, Edition, Env, Profile};
use super::patch::{self, Label, Row};
use super::profile;
use std::path::{Path, PathBuf};

/// A launch that can serve (possibly with warnings).
#[derive(Debug, Clone)]
pub struct Launch {
    /// The configuration.
    pub cfg: Config,
    /// What the release writes to stderr at startup ("" when nothing).
    pub stderr: String,
    /// Whether it serves stdio.
    pub boot: Boot,
}

/// What the process does once booted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boot {
    /// Serve the protocol on stdio.
    Serve,
    /// Nothing serves stdio (the JSON-RPC server row is disabled) and nothing else keeps the
    /// process alive: exit at once with this code (`sdk-minimal`).
    Exit(i32),
    /// Nothing serves stdio, but the profile's other rows keep the process alive: read nothing,
    /// answer nothing, and exit only on a signal (`sdk`, whose `dsh-base` rows keep running).
    Hold,
}

/// A launch that fails before serving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The whole stderr text.
    pub stderr: String,
    /// The exit code (1 like the release's startup failures; 2 for the reference's own usage errors).
    pub code: i32,
}

impl Failure {
    fn startup(message: String) -> Failure {
        Failure {
            stderr: format!("Error: {message}\n"),
            code: 1,
        }
    }
}

/// What the command line says (`None` from [`parse_args`]: `--help`).
#[derive(Debug, Clone, Default)]
pub struct Args {
    /// `--edition`.
    pub edition: Edition,
    /// `--profile` (default `sdk`, the reference's leniency: the release requires it).
    pub profile: Option<String>,
    /// `--patch` files, in order.
    pub patches: Vec<String>,
    /// `--realistic-timing`.
    pub realistic_timing: bool,
    /// `--shell real|emulated`: what runs `sdk-minimal`'s bash (default real).
    pub shell: super::shell::ShellMode,
    /// `--version` / `-V`: print [`RELEASE_VERSION`] and exit 0, as the release does.
    pub version: bool,
}

/// What `--version` prints: the version of the release the reference stands in for, in the
/// release's own spelling (its `--version` and `-V`, wherever they are in argv, print this and
/// exit 0). The kit's own version is `dsh-conformance --version`.
pub const RELEASE_VERSION: &str = "0.2.1-rc.2";

/// Parses the arguments (without the program name); `Ok(None)` for `--help`.
pub fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let mut a = Args::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |n: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it.next().cloned().ok_or(format!("{n} needs a value")),
            }
        };
        match name {
            "-h" | "--help" => return Ok(None),
            "-V" | "--version" if inline.is_none() => a.version = true,
            "--profile" => a.profile = Some(value(name)?),
            "--edition" => {
                a.edition = value(name)?
                    .parse()
                    .map_err(|e: crate::edition::UnknownEdition| e.to_string())?
            }
            "--patch" => a.patches.push(value(name)?),
            "--shell" => a.shell = value(name)?.parse()?,
            "--realistic-timing" if inline.is_none() => a.realistic_timing = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(a))
}

/// The release's harness home: `$DSH_HOME` unless blank, else `~/.dsh`.
fn dsh_home(lookup: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    match lookup("DSH_HOME").filter(|h| !h.trim().is_empty()) {
        Some(h) => PathBuf::from(h),
        None => PathBuf::from(lookup("HOME").unwrap_or_else(|| "/".into())).join(".dsh"),
    }
}

/// Which shipped profile a user profile's `package.json` composes (by its bundle list).
fn user_profile(home: &Path, name: &str) -> Result<Profile, String> {
    let missing = || {
        format!(
            "{}: profile {} does not exist; create it with 'dsh plugin --profile {name} add <package>'",
            patch::BIN,
            super::events::js_quote(name)
        )
    };
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(missing());
    }
    let file = home.join("profiles").join(name).join("package.json");
    let text = std::fs::read_to_string(&file).map_err(|_| missing())?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: profile {} has an unreadable package.json ({}): {e}",
            patch::BIN,
            super::events::js_quote(name),
            file.display()
        )
    })?;
    let bundles: Vec<&str> = json["dsh"]["profile"]["bundles"]
        .as_array()
        .map(|b| b.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    if bundles == profile::MINIMAL_BUNDLES {
        Ok(Profile::SdkMinimal)
    } else if bundles == profile::SDK_BUNDLES {
        Ok(Profile::Sdk)
    } else {
        Err(format!(
            "{}: profile {} composes bundles {bundles:?}; the dsh-conformance reference runtime models only those of sdk ({:?}) and sdk-minimal ({:?})",
            patch::BIN,
            super::events::js_quote(name),
            profile::SDK_BUNDLES,
            profile::MINIMAL_BUNDLES
        ))
    }
}

/// Builds the configuration of a launch with these arguments, environment and process cwd
/// (reading the patch files it names). `DSH_HOME` for persistence is read through `lookup` too.
pub fn launch(
    args: &Args,
    lookup: &dyn Fn(&str) -> Option<String>,
    process_cwd: &Path,
) -> Result<Launch, Failure> {
    let env = Env::from_lookup(lookup).map_err(|e| Failure {
        stderr: format!("dsh-reference-runtime: {e}\n"),
        code: 1,
    })?;
    let home = dsh_home(lookup);
    let name = args.profile.clone().unwrap_or_else(|| "sdk".into());
    let profile = match name.parse::<Profile>() {
        Ok(p) => p,
        Err(_) => user_profile(&home, &name).map_err(Failure::startup)?,
    };
    let mut rows: Vec<Row> = profile::rows(profile)
        .iter()
        .map(|(id, package)| Row {
            id: (*id).into(),
            name: (*package).into(),
            disabled: false,
            inserted: false,
        })
        .collect();
    let profile_dir = home.join("profiles").join(&name);
    let mut layers = vec![
        (profile_dir.join("cordis.patch.yml"), Label::Patches),
        (home.join("cordis.patch.yml"), Label::Patches),
    ];
    for p in &args.patches {
        layers.push((process_cwd.join(p), Label::Overlay));
    }
    for (file, label) in &layers {
        if let Some(list) = patch::read_layer(file, *label).map_err(Failure::startup)? {
            patch::apply(&mut rows, &list, file);
        }
    }
    let import_base = format!("{}/", profile_dir.display());
    let table: &'static activation::Services = match profile {
        Profile::SdkMinimal => activation::MINIMAL_SERVICES,
        Profile::Sdk => &[],
    };
    let inactive = activation::audit(&rows, table, |r| {
        patch::import_failure(r, &import_base).or_else(|| activation::duplicate_service(r, &rows))
    });
    // Inserted rows of tool packages that activated offer their tools.
    let extra_tools: Vec<String> = rows
        .iter()
        .filter(|r| r.inserted && !r.disabled && !inactive.iter().any(|i| i.id == r.id))
        .filter_map(|r| {
            super::editor::TOOL_PACKAGES
                .iter()
                .find(|(p, _)| *p == r.name)
                .map(|(_, t)| t.to_string())
        })
        .collect();
    let stderr = activation::verdict(&inactive)
        .map_err(|stderr| Failure { stderr, code: 1 })?
        .unwrap_or_default();
    let server_off = rows
        .iter()
        .any(|r| r.id == "sdk-jsonrpc-server" && r.disabled && !r.inserted);
    let cfg = Config {
        edition: args.edition,
        profile,
        home: lookup("DSH_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from),
        process_cwd: process_cwd.to_path_buf(),
        env,
        disabled_rows: rows
            .iter()
            .filter(|r| r.disabled && !r.inserted)
            .map(|r| r.id.clone())
            .collect(),
        extra_tools,
        realistic_timing: args.realistic_timing,
        cwd_must_exist: true,
        sandbox: super::sandbox::Sandbox::none(),
        shell: args.shell,
    };
    Ok(Launch {
        cfg,
        stderr,
        boot: match (server_off, profile) {
            (false, _) => Boot::Serve,
            (true, Profile::SdkMinimal) => Boot::Exit(0),
            (true, Profile::Sdk) => Boot::Hold,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn run(argv: &[&str], vars: &[(&str, &str)]) -> Result<Launch, Failure> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let args = parse_args(&argv).unwrap().unwrap();
        launch(
            &args,
            &|k| vars.get(k).cloned(),
            Path::new("/nonexistent-cwd"),
        )
    }

    #[test]
    fn a_missing_overlay_fails_before_serving() {
        let f = run(
            &["--profile", "sdk-minimal", "--patch", "o.yml"],
            &[("DSH_HOME", "/nonexistent-home")],
        )
        .unwrap_err();
        assert_eq!(f.code, 1);
        assert_eq!(f.stderr, "Error: dsh: failed to read overlay /nonexistent-cwd/o.yml: Error: ENOENT: no such file or directory, open '/nonexistent-cwd/o.yml'\n");
    }

    #[test]
    fn unknown_profiles_fail_like_the_release_and_the_environment_is_read() {
        let f = run(
            &["--profile", "bogus"],
            &[("DSH_HOME", "/nonexistent-home")],
        )
        .unwrap_err();
        assert_eq!(f.stderr, "Error: dsh: profile \"bogus\" does not exist; create it with 'dsh plugin --profile bogus add <package>'\n");
        let l = run(
            &["--profile", "sdk-minimal", "--realistic-timing"],
            &[("DSH_SYSTEM_PROMPT", "x")],
        )
        .unwrap();
        assert_eq!(l.cfg.profile, Profile::SdkMinimal);
        assert!(l.cfg.realistic_timing);
        assert_eq!(l.cfg.shell, crate::runtime::shell::ShellMode::default());
        assert_eq!(l.cfg.env.system_prompt.as_deref(), Some("x"));
        assert_eq!((l.stderr.as_str(), l.boot), ("", Boot::Serve));
        let l = run(&["--shell", "emulated"], &[]).unwrap();
        assert_eq!(l.cfg.shell, crate::runtime::shell::ShellMode::Emulated);
        assert!(parse_args(&["--shell=bogus".to_string()]).is_err());
    }
}
