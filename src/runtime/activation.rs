//! Which rows activate (docs/CONTRACT.md#s13.6): the `sdk-minimal` rows' services, and the
//! release's startup audit over them — a row waits while a service it injects has no active
//! provider; a waiting or failed required row (`sdk-jsonrpc-server`, `agent-loop`) fails startup
//! (exit 1), any other makes a `did not activate` warning.
//!
//! The services table was derived from the release: each row disabled alone by an overlay, the
//! rows it left waiting and the services they named (a service belongs to the row whose removal,
//! and only whose, made it missing), checked to reproduce every one of those 33 runs.

use super::patch::{Row, BIN};

/// Each `sdk-minimal` row: (id, services it provides, services it injects, in its order).
pub const MINIMAL_SERVICES: &Services = &[
    ("sdk-app-startup", &["sdkAppStartup"], &[]),
    (
        "sdk-jsonrpc-server",
        &[],
        &["sdkAppStartup", "workingDirectory", "agents"],
    ),
    (
        "deepseek-llm-api-extensions",
        &["deepseekLlmApiExtensions"],
        &[],
    ),
    (
        "session-log-deepseek",
        &[],
        &["deepseekLlmApiExtensions", "sessions"],
    ),
    (
        "plugin-package-inventory-deepseek",
        &[],
        &["deepseekLlmApiExtensions", "agents"],
    ),
    ("llm-deepseek", &[], &["llm"]),
    ("sandbox", &[], &[]),
    ("filesystem", &["fs"], &[]),
    ("attachment-local", &[], &[]),
    (
        "tool-fs",
        &[],
        &["fs", "tools", "systemPrompt", "workingDirectory"],
    ),
    (
        "working-directory",
        &["workingDirectory"],
        &["fs", "sessionProjections", "systemPrompt"],
    ),
    (
        "tool-working-directory",
        &[],
        &["tools", "workingDirectory"],
    ),
    ("session-projection", &["sessionProjections"], &[]),
    ("token-meter", &["tokenMeter"], &["sessionProjections"]),
    ("compaction-basic", &[], &["tokenMeter", "llm", "sessions"]),
    ("image-offload", &[], &["sessions", "agents"]),
    (
        "sandbox-policy",
        &["sandboxPolicy"],
        &["sessionProjections"],
    ),
    ("subprocess", &["subprocess"], &[]),
    ("pty", &["terminals"], &[]),
    (
        "terminal-bash",
        &[],
        &[
            "sandboxPolicy",
            "sessionProjections",
            "workingDirectory",
            "subprocess",
            "terminals",
        ],
    ),
    ("timer", &[], &[]),
    ("llm", &["llm"], &[]),
    ("session", &["sessions"], &[]),
    ("session-title", &[], &["sessionProjections", "sessions"]),
    ("system-prompt", &["systemPrompt"], &[]),
    ("tools", &["tools"], &["systemPrompt"]),
    ("mcp-resources", &[], &["tools"]),
    ("agent", &["agents"], &[]),
    ("llm-retry", &[], &["sessionProjections", "agents"]),
    ("jobs", &[], &[]),
    (
        "agent-loop",
        &[],
        &[
            "sessionProjections",
            "llm",
            "sessions",
            "tools",
            "systemPrompt",
            "agents",
        ],
    ),
    (
        "persistent-bash",
        &[],
        &["terminals", "tools", "workingDirectory"],
    ),
    ("sessions", &[], &[]),
];

/// Packages whose inserted row fails when a profile row of the same package already provides
/// its service: (package, service, the provider's class as the release names it).
const SINGLE_PROVIDERS: &[(&str, &str, &str)] =
    &[("@deepseek-ai/dsh-fs-local", "fs", "LocalFileSystem")];

/// Why an inserted row fails for a service a profile row already registered (the release:
/// `Error: service "fs" has been registered at <LocalFileSystem>`).
pub fn duplicate_service(row: &Row, rows: &[Row]) -> Option<String> {
    let (_, service, class) = SINGLE_PROVIDERS.iter().find(|(p, _, _)| *p == row.name)?;
    let taken = rows
        .iter()
        .any(|r| !r.inserted && !r.disabled && r.name == row.name);
    (row.inserted && taken)
        .then(|| format!("Error: service \"{service}\" has been registered at <{class}>"))
}

/// Rows whose inactivity fails startup (the release's global list, as far as these trees hold them).
pub const REQUIRED: &[&str] = &["agent-loop", "sdk-jsonrpc-server"];

/// One row that did not activate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inactive {
    /// The row.
    pub id: String,
    /// Its package (or `file://` URL).
    pub name: String,
    /// Why: `Err(detail)` failed to import, `Ok(services)` waits for these services.
    pub outcome: Result<Vec<String>, String>,
}

impl Inactive {
    fn required(&self) -> bool {
        REQUIRED.contains(&self.id.as_str())
    }

    /// The release's per-row line (`<id> (<name>): …`).
    pub fn line(&self) -> String {
        let detail = match &self.outcome {
            Err(d) => d.clone(),
            Ok(s) => format!(
                "pending (waiting for {}: {})",
                if s.len() == 1 { "service" } else { "services" },
                s.join(", ")
            ),
        };
        format!("{} ({}): {detail}", self.id, self.name)
    }
}

/// A services table: (row id, provides, injects).
pub type Services = [(
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
)];

fn lookup(
    table: &'static Services,
    id: &str,
) -> (&'static [&'static str], &'static [&'static str]) {
    table
        .iter()
        .find(|(r, _, _)| *r == id)
        .map_or((&[], &[]), |(_, p, i)| (*p, *i))
}

/// The rows (in tree order) that do not activate: inserted rows that cannot be imported
/// (`import_failure` says why, `None` when the row loads), then every enabled row waiting for a
/// service no active row provides, by `table` (the reference models `sdk-minimal`'s,
/// [`MINIMAL_SERVICES`]; for `sdk` it passes none).
pub fn audit(
    rows: &[Row],
    table: &'static Services,
    import_failure: impl Fn(&Row) -> Option<String>,
) -> Vec<Inactive> {
    let services_of = |id: &str| lookup(table, id);
    let failed: Vec<Option<String>> = rows
        .iter()
        .map(|r| if r.disabled { None } else { import_failure(r) })
        .collect();
    let mut active: Vec<bool> = rows
        .iter()
        .zip(&failed)
        .map(|(r, f)| !r.disabled && f.is_none())
        .collect();
    let provided = |active: &[bool]| -> Vec<&'static str> {
        rows.iter()
            .zip(active)
            .filter(|(r, a)| **a && !r.inserted)
            .flat_map(|(r, _)| services_of(&r.id).0.iter().copied())
            .collect()
    };
    loop {
        let avail = provided(&active);
        let mut changed = false;
        for (i, r) in rows.iter().enumerate() {
            if active[i] && !r.inserted && services_of(&r.id).1.iter().any(|s| !avail.contains(s)) {
                active[i] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let avail = provided(&active);
    rows.iter()
        .zip(failed)
        .zip(&active)
        .filter(|((r, _), a)| !r.disabled && !**a)
        .map(|((r, f), _)| Inactive {
            id: r.id.clone(),
            name: r.name.clone(),
            outcome: match f {
                Some(detail) => Err(detail),
                None => Ok(services_of(&r.id)
                    .1
                    .iter()
                    .filter(|s| !avail.contains(s))
                    .map(|s| s.to_string())
                    .collect()),
            },
        })
        .collect()
}

/// The release's verdict on the inactive rows: `Err(stderr)` when a required one is among them
/// (startup fails, exit 1), else the warning (`None` when every row activated).
pub fn verdict(inactive: &[Inactive]) -> Result<Option<String>, String> {
    let required = inactive.iter().filter(|i| i.required()).count();
    if required == 0 {
        if inactive.is_empty() {
            return Ok(None);
        }
        let noun = if inactive.len() == 1 {
            "entry"
        } else {
            "entries"
        };
        let lines: Vec<String> = inactive.iter().map(Inactive::line).collect();
        return Ok(Some(format!(
            "{BIN}: warning: {} {noun} did not activate\n{}\n",
            inactive.len(),
            lines.join("\n")
        )));
    }
    let label = |i: &Inactive| {
        if i.required() {
            format!("{} (required)", i.id)
        } else {
            i.id.clone()
        }
    };
    let mut out = vec![format!(
        "{BIN}: startup failed: {required} required {} did not activate",
        if required == 1 { "plugin" } else { "plugins" }
    )];
    let failed: Vec<&Inactive> = inactive.iter().filter(|i| i.outcome.is_err()).collect();
    if !failed.is_empty() {
        out.push(String::new());
        out.push(format!("Failed plugins ({}):", failed.len()));
        for i in failed {
            out.push(format!("  {}", label(i)));
            out.push(format!("    Package: {}", i.name));
            if let Err(d) = &i.outcome {
                out.extend(d.lines().map(|l| format!("    {l}")));
            }
        }
    }
    let mut pending: Vec<&Inactive> = inactive.iter().filter(|i| i.outcome.is_ok()).collect();
    if !pending.is_empty() {
        pending.sort_by_key(|i| !i.required());
        let width = pending
            .iter()
            .map(|i| label(i).len())
            .max()
            .unwrap_or(0)
            .max(6)
            + 2;
        out.push(String::new());
        out.push(format!("Plugins waiting for services ({}):", pending.len()));
        out.push(format!("  {:width$}Missing services", "Plugin"));
        for i in pending {
            let missing = i.outcome.as_ref().map(|s| s.join(", ")).unwrap_or_default();
            out.push(format!("  {:width$}{missing}", label(i)));
        }
    }
    Err(out.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal_rows(disabled: &[&str]) -> Vec<Row> {
        MINIMAL_SERVICES
            .iter()
            .map(|(id, _, _)| Row {
                id: (*id).into(),
                name: format!("@deepseek-ai/{id}"),
                disabled: disabled.contains(id),
                inserted: false,
            })
            .collect()
    }

    #[test]
    fn a_missing_service_leaves_its_dependents_waiting() {
        let none = |_: &Row| None;
        assert!(audit(&minimal_rows(&[]), MINIMAL_SERVICES, none).is_empty());
        let i = audit(&minimal_rows(&["token-meter"]), MINIMAL_SERVICES, none);
        assert_eq!(
            verdict(&i).unwrap().unwrap(),
            "dsh: warning: 1 entry did not activate\ncompaction-basic (@deepseek-ai/compaction-basic): pending (waiting for service: tokenMeter)\n"
        );
        let i = audit(&minimal_rows(&["system-prompt"]), MINIMAL_SERVICES, none);
        let e = verdict(&i).unwrap_err();
        assert!(e.starts_with("dsh: startup failed: 2 required plugins did not activate\n\nPlugins waiting for services (9):\n  Plugin                         Missing services\n  sdk-jsonrpc-server (required)  workingDirectory\n  agent-loop (required)          tools, systemPrompt\n"), "{e}");
        // Nothing waits under `sdk`, whose services the reference does not model.
        assert!(audit(&minimal_rows(&["system-prompt"]), &[], none).is_empty());
    }
}
