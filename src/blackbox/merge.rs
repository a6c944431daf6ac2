//! The findings of several runs in one: each `--out` directory keeps its run's classes in
//! [`FINDINGS`] beside the reproducing traces; `fuzz merge` joins several such directories (the
//! shards of a CI matrix, say) into one, one entry per class (counts added, the first run's
//! reproducer kept, a few examples of where else it showed).

use super::Summary;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The file of an `--out` directory that lists its run's finding classes.
pub const FINDINGS: &str = "findings.json";

/// Examples kept per class.
const EXAMPLES: usize = 5;

/// Writes `sum`'s classes to `dir/findings.json` (the traces are there already).
pub fn write(sum: &Summary, dir: &Path) -> Result<(), String> {
    let findings: Vec<Value> = sum
        .findings
        .iter()
        .map(|r| {
            json!({
                "class": r.finding.class.to_string(),
                "count": r.count,
                "detail": r.finding.detail,
                "examples": [{"seed": sum.seed, "case": r.case, "shard": sum.shard.to_string()}],
                "trace": r.trace.as_ref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()),
                "note": r.trace_note,
            })
        })
        .collect();
    let doc = json!({
        "runs": [{
            "seed": sum.seed,
            "shard": sum.shard.to_string(),
            "sequences": sum.sequences,
            "interrupted": sum.interrupted.map(|h| h.to_string()),
        }],
        "findings": findings,
    });
    save(&doc, dir)
}

fn save(doc: &Value, dir: &Path) -> Result<(), String> {
    let path = dir.join(FINDINGS);
    let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
    std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&path, text))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// What a merge made.
#[derive(Debug, Default)]
pub struct Merged {
    /// Runs merged.
    pub runs: usize,
    /// Sequences they ran.
    pub sequences: u64,
    /// Class → (sequences that showed it, its trace file in the merged directory).
    pub classes: BTreeMap<String, (u64, Option<String>)>,
}

impl Merged {
    /// The human summary.
    pub fn human(&self) -> String {
        let mut s = format!(
            "fuzz merge: {} run(s), {} sequences\nfindings: {} class(es)\n",
            self.runs,
            self.sequences,
            self.classes.len()
        );
        for (c, (n, trace)) in &self.classes {
            s.push_str(&format!("  {c} ×{n}"));
            if let Some(t) = trace {
                s.push_str(&format!("  trace: {t}"));
            }
            s.push('\n');
        }
        s
    }
}

/// Joins the `findings.json` and traces of `dirs` into `out` (which may be one of them): one
/// entry per class, counts added, the first directory's trace of it kept.
pub fn merge(dirs: &[&Path], out: &Path) -> Result<Merged, String> {
    let mut runs = Vec::new();
    let mut classes: BTreeMap<String, Value> = BTreeMap::new();
    let mut copies = Vec::new();
    for dir in dirs {
        let path = dir.join(FINDINGS);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a findings file: {e}", path.display()))?;
        runs.extend(doc["runs"].as_array().cloned().unwrap_or_default());
        for f in doc["findings"].as_array().cloned().unwrap_or_default() {
            let Some(class) = f["class"].as_str().map(str::to_owned) else {
                continue;
            };
            match classes.get_mut(&class) {
                None => {
                    if let Some(t) = f["trace"].as_str() {
                        copies.push((dir.join(t), out.join(t)));
                    }
                    classes.insert(class, f);
                }
                Some(m) => {
                    let n = m["count"].as_u64().unwrap_or(0) + f["count"].as_u64().unwrap_or(0);
                    m["count"] = n.into();
                    let mut ex = m["examples"].as_array().cloned().unwrap_or_default();
                    ex.extend(f["examples"].as_array().cloned().unwrap_or_default());
                    ex.truncate(EXAMPLES);
                    m["examples"] = ex.into();
                    if m["trace"].is_null() {
                        if let Some(t) = f["trace"].as_str() {
                            copies.push((dir.join(t), out.join(t)));
                            m["trace"] = t.into();
                        }
                    }
                }
            }
        }
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for (from, to) in copies {
        if from != to {
            std::fs::copy(&from, &to)
                .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))?;
        }
    }
    let merged = Merged {
        runs: runs.len(),
        sequences: runs.iter().filter_map(|r| r["sequences"].as_u64()).sum(),
        classes: classes
            .iter()
            .map(|(c, f)| {
                let trace = f["trace"].as_str().map(str::to_owned);
                (c.clone(), (f["count"].as_u64().unwrap_or(0), trace))
            })
            .collect(),
    };
    let doc = json!({"runs": runs, "findings": classes.into_values().collect::<Vec<_>>()});
    save(&doc, out)?;
    Ok(merged)
}
