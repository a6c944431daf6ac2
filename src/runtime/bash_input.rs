//! The `sdk` profile's bash inputs beside `command` (docs/CONTRACT.md#s13.6), read as the
//! release's `@deepseek-ai/dsh-tool-bash` reads them: `workdir` (relative to the session's
//! directory, joined as written), `timeoutMs` (a positive number: how long a foreground call is
//! waited on before it moves to a background job) and `run_in_background`.

use serde_json::Value;
use std::time::Duration;

/// The executor's default wait (`timeoutMs` 120000).
const DEFAULT_TIMEOUT_MS: f64 = 120_000.0;

/// A bash call's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct BashInput {
    /// The directory the command runs in (the result's `meta.cwd`).
    pub workdir: String,
    /// The call's `timeoutMs`, or the error result of an invalid one.
    pub timeout: Result<Option<f64>, String>,
    /// `run_in_background: true`.
    pub background: bool,
}

impl BashInput {
    /// The inputs of the arguments `args` (JSON text) of a call in session directory `cwd`.
    pub fn of(args: &str, cwd: &str) -> BashInput {
        let v = crate::wire::json::parse(args).map_or(Value::Null, |p| p.value);
        let workdir = match v.get("workdir").and_then(Value::as_str) {
            None => cwd.to_string(),
            Some(w) if w.starts_with('/') => w.to_string(),
            Some(w) => format!("{cwd}/{w}"),
        };
        let timeout = match v.get("timeoutMs") {
            None => Ok(None),
            Some(t) => match t.as_f64() {
                Some(n) if n.is_finite() && n > 0.0 => Ok(Some(n)),
                _ => Err(format!(
                    "Error: invalid timeoutMs: expected a positive number, got {}",
                    crate::wire::json::to_string(t)
                )),
            },
        };
        BashInput {
            workdir,
            timeout,
            background: v.get("run_in_background") == Some(&Value::Bool(true)),
        }
    }

    fn timeout_ms(&self) -> f64 {
        self.timeout
            .clone()
            .ok()
            .flatten()
            .unwrap_or(DEFAULT_TIMEOUT_MS)
    }

    /// How long a foreground call is waited on.
    pub fn wait(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_ms() / 1000.0)
    }

    /// The wait as the promotion notice prints it (`400`).
    pub fn timeout_text(&self) -> String {
        super::jobs::js_number(self.timeout_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_read_as_the_release_reads_them() {
        let i = BashInput::of(r#"{"command":"x","workdir":"sub"}"#, "/w");
        assert_eq!((i.workdir.as_str(), i.background), ("/w/sub", false));
        assert_eq!(BashInput::of(r#"{"workdir":""}"#, "/w").workdir, "/w/");
        assert_eq!(BashInput::of(r#"{"workdir":"/usr"}"#, "/w").workdir, "/usr");
        assert_eq!(BashInput::of("{}", "/w").workdir, "/w");
        let t = BashInput::of(r#"{"timeoutMs":400,"run_in_background":true}"#, "/w");
        assert_eq!((t.timeout_text(), t.background), ("400".into(), true));
        assert_eq!(t.wait(), Duration::from_millis(400));
        assert_eq!(BashInput::of("{}", "/w").wait(), Duration::from_secs(120));
        assert_eq!(
            BashInput::of(r#"{"timeoutMs":0}"#, "/w").timeout,
            Err("Error: invalid timeoutMs: expected a positive number, got 0".into())
        );
        assert_eq!(
            BashInput::of(r#"{"timeoutMs":-5}"#, "/w").timeout,
            Err("Error: invalid timeoutMs: expected a positive number, got -5".into())
        );
        assert!(!BashInput::of(r#"{"run_in_background":"yes"}"#, "/w").background);
    }
}
