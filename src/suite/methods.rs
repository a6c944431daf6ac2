//! Methods the runtime lacks: one probe before the checks asks the runtime each method its
//! edition has (with harmless params) beside one no edition has, and a method answered as that
//! one is ([`is_unknown_answer`]) is missing. Each missing method is one root cause, on the check
//! that owns it ([`crate::check::METHOD_OWNERS`]); a check whose every case needs a missing method
//! is blocked by that owner, and a case that needs one is left out of a check that has others.
//! Without this, a check whose rule needs the method could pass on a case that never reached it.

use super::cases::CheckCase;
use super::options::{runner_opts, Options};
use super::probe::{answer_to, Answer};
use super::verdict::{Failure, FailureKind, Verdict};
use crate::check::{method_owner, CheckId, CheckInfo, METHOD_OWNERS};
use crate::runner::{self, CommandSpec};
use crate::wire::output::Output;
use serde_json::{json, Value};

/// A method of the edition that the runtime answers as an unknown one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingMethod {
    /// The method.
    pub method: String,
    /// The check that owns its presence.
    pub owner: CheckId,
    /// The error it was answered with (compact JSON).
    pub answer: String,
}

/// The method that no edition has: what the runtime answers an unknown method.
const UNKNOWN: &str = "dsh/method-probe";

/// The probe's harmless params per method: unknown sessions, a directory that is not there, a
/// prompt without content. Any answer but the unknown method's shows the method is there.
fn probe_params(method: &str) -> Value {
    match method {
        "session/working-directory/set" => {
            json!({"sessionId": "dsh-method-probe", "path": "dsh-method-probe-no-such-directory"})
        }
        "session/resume" | "session/wait" => json!({"sessionId": "dsh-method-probe-absent"}),
        _ => json!({"sessionId": "dsh-method-probe"}),
    }
}

/// The probe's requests in order, each one's id `m<index>`: the method no edition has first,
/// then `methods`, `shutdown` (which ends the process) last.
fn probe_order<'m>(methods: &[&'m str]) -> Vec<&'m str> {
    let mut order = vec![UNKNOWN];
    order.extend(methods.iter().filter(|m| **m != "shutdown"));
    order.extend(methods.iter().filter(|m| **m == "shutdown"));
    order
}

/// The probe's opening: initialize, answered.
const PROBE_START: &str = r#"# case: method-probe
ignore {"method":"{{string}}"}
>> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"jsonrpc":"2.0","id":"init"} within 30s
"#;

/// The probe trace for `methods` ([`probe_order`]): every request but shutdown sent at once and
/// answered in any order, then shutdown.
fn probe_trace(methods: &[&str]) -> String {
    let send = |i: usize, m: &str| {
        let request = json!({"jsonrpc": "2.0", "id": format!("m{i}"), "method": m, "params": probe_params(m)});
        format!(">> {request}\n")
    };
    let answer = |i: usize| format!("<< {}\n", json!({"jsonrpc": "2.0", "id": format!("m{i}")}));
    let order = probe_order(methods);
    let served = order.iter().take_while(|m| **m != "shutdown").count();
    let mut t = String::from(PROBE_START);
    let numbered = || order.iter().copied().enumerate();
    t.extend(numbered().take(served).map(|(i, m)| send(i, m)));
    t.push_str("<<unordered\n");
    t.extend((0..served).map(answer));
    t.push_str("<<end\n");
    t.extend(
        numbered()
            .skip(served)
            .map(|(i, m)| send(i, m) + &answer(i)),
    );
    t
}

/// The methods the selected checks' cases call that the edition has and may lack, in
/// [`METHOD_OWNERS`] order.
pub fn probed_methods(
    selected: &[&'static CheckInfo],
    cases: &[CheckCase],
    opts: &Options,
) -> Vec<&'static str> {
    let used = |m: &str| {
        cases.iter().any(|c| {
            c.applies_to(opts.edition)
                && selected.iter().any(|s| s.id == c.check.id)
                && c.methods.iter().any(|u| u == m)
        })
    };
    METHOD_OWNERS
        .iter()
        .map(|(m, _)| *m)
        .filter(|m| method_owner(m, opts.edition).is_some() && used(m))
        .collect()
}

/// Runs the probe for `methods`; the ones the runtime lacks. A probe that did not get every
/// answer decides only the methods it got answers for (a missing answer is no sign of absence).
pub fn probe(cmd: &CommandSpec, opts: &Options, methods: &[&str]) -> Vec<MissingMethod> {
    if methods.is_empty() {
        return Vec::new();
    }
    let Ok(mut trace) = crate::trace::Trace::parse(&probe_trace(methods), "method-probe") else {
        return Vec::new();
    };
    trace.frames_only = false;
    // The probe is no check: a runtime that floods it is left for the first check to find (and
    // name as the root cause), so the flood does not stop the run here, and the probe's output
    // does not count against the run's shared bound.
    let mut ro = runner_opts(opts);
    ro.flood_halts_run = false;
    ro.stdout = opts.stdout.fresh();
    let r = runner::replay(&trace, cmd, &ro);
    missing(&r.transcript.stdout, methods, opts.edition)
}

/// [`probe`]'s decision from the probe's stdout: the answers by request id.
fn missing(
    stdout: &[Output],
    methods: &[&str],
    edition: crate::edition::Edition,
) -> Vec<MissingMethod> {
    let error = |i: usize| match answer_to(stdout, &format!("m{i}")) {
        Some(Answer::Error(e)) => Some(e),
        _ => None,
    };
    let unknown = error(0);
    let mut out = Vec::new();
    for (i, m) in probe_order(methods).into_iter().enumerate().skip(1) {
        let Some(error) = error(i) else {
            continue;
        };
        if is_unknown_answer(&error, m, unknown.as_ref()) {
            out.push(MissingMethod {
                method: m.to_owned(),
                owner: method_owner(m, edition).expect("probed methods have owners"),
                answer: crate::wire::json::to_string(&error),
            });
        }
    }
    out
}

/// Whether `error`, the answer to `method`, is how the runtime answers an unknown method: JSON-RPC's
/// -32601, the contract's unknown-method message naming it, or the error it gave the method no
/// edition has, with that method's name put in.
pub fn is_unknown_answer(error: &Value, method: &str, unknown: Option<&Value>) -> bool {
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    if error.get("code").and_then(Value::as_i64) == Some(-32601)
        || message == format!("unknown DeepSeek Harness SDK runtime method: {method}")
    {
        return true;
    }
    let Some(u) = unknown else {
        return false;
    };
    let um = u.get("message").and_then(Value::as_str).unwrap_or("");
    // A message that never names the method (`Method not found`) says nothing when it is not
    // -32601: an unknown session's error could read the same for every method.
    um.contains(UNKNOWN)
        && error.get("code") == u.get("code")
        && message == um.replace(UNKNOWN, method)
}

/// The owner checks' verdicts, each naming its missing methods: one root cause per owner.
pub fn owner_verdicts(missing: &[MissingMethod], opts: &Options) -> Vec<(CheckId, Verdict)> {
    let mut owners: Vec<CheckId> = missing.iter().map(|m| m.owner).collect();
    owners.dedup();
    owners
        .into_iter()
        .map(|owner| {
            let mine: Vec<&MissingMethod> = missing.iter().filter(|m| m.owner == owner).collect();
            let names: Vec<String> = mine.iter().map(|m| format!("`{}`", m.method)).collect();
            let mut f = Failure::new(
                FailureKind::MissingMethod,
                format!(
                    "the runtime lacks {}, which edition {} has: it answers {} as an unknown method",
                    names.join(" and "),
                    opts.edition,
                    if mine.len() == 1 { "it" } else { "them" },
                ),
            );
            f.details = mine
                .iter()
                .map(|m| format!("{} answered {}", m.method, m.answer))
                .collect::<Vec<_>>()
                .join("\n");
            (owner, Verdict::Fail(Box::new(f)))
        })
        .collect()
}

/// The cases of a check that can run: those that call no missing method. `Err`: the verdict of a
/// check none of whose cases can: blocked by the methods' owners, or untestable when an owner
/// is not among the `selected` checks (so its failure is not in the report).
pub fn runnable<'c>(
    cases: Vec<&'c CheckCase>,
    missing: &[MissingMethod],
    selected: &[&'static CheckInfo],
) -> Result<Vec<&'c CheckCase>, Verdict> {
    let lacks = |c: &CheckCase| -> Vec<CheckId> {
        let by = missing.iter().filter(|m| c.methods.contains(&m.method));
        by.map(|m| m.owner).collect()
    };
    if cases.is_empty() || missing.is_empty() {
        return Ok(cases);
    }
    let mut by: Vec<CheckId> = cases.iter().flat_map(|c| lacks(c)).collect();
    let ok: Vec<&CheckCase> = cases.into_iter().filter(|c| lacks(c).is_empty()).collect();
    if !ok.is_empty() {
        return Ok(ok);
    }
    by.sort_unstable();
    by.dedup();
    if by.iter().all(|o| selected.iter().any(|s| s.id == *o)) {
        return Err(Verdict::Blocked { by });
    }
    let names: Vec<String> = (missing.iter())
        .filter(|m| by.contains(&m.owner))
        .map(|m| format!("`{}`", m.method))
        .collect();
    let reason = format!(
        "it needs {}, which the runtime lacks (select {} to see it fail for that)",
        names.join(" and "),
        crate::check::list(&by)
    );
    Err(Verdict::NotTestable { reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn out(lines: &[&str]) -> Vec<Output> {
        (lines.iter().enumerate())
            .map(|(i, s)| Output::parse(i + 1, s.to_string()))
            .collect()
    }

    #[test]
    fn a_method_answered_as_the_unknown_one_is_missing_whatever_its_words() {
        let unknown = json!({"code": -32000, "message": "no handler for dsh/method-probe"});
        let lacks = json!({"code": -32000, "message": "no handler for session/resume"});
        assert!(is_unknown_answer(&lacks, "session/resume", Some(&unknown)));
        let session = json!({"code": -32603, "message": "unknown SDK session: x"});
        assert!(!is_unknown_answer(
            &session,
            "session/resume",
            Some(&unknown)
        ));
        let upstream = json!({"code": -32603, "message": "unknown DeepSeek Harness SDK runtime method: session/wait"});
        assert!(is_unknown_answer(&upstream, "session/wait", None));
        assert!(is_unknown_answer(
            &json!({"code": -32601, "message": "Method not found"}),
            "shutdown",
            None
        ));
        // Not naming the method, not -32601: an error like any other.
        let vague = json!({"code": -32000, "message": "bad request"});
        assert!(!is_unknown_answer(&vague, "session/wait", Some(&vague)));
    }

    #[test]
    fn the_probe_names_each_missing_method_with_its_owner_and_answer() {
        use crate::edition::Edition;
        let methods = [
            "session/prompt",
            "session/resume",
            "session/wait",
            "shutdown",
        ];
        let stdout = out(&[
            r#"{"jsonrpc":"2.0","id":"init","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"m0","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: dsh/method-probe"}}"#,
            r#"{"jsonrpc":"2.0","id":"m1","error":{"code":-32603,"message":"session/prompt requires contentBlocks"}}"#,
            r#"{"jsonrpc":"2.0","id":"m2","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: session/resume"}}"#,
            r#"{"jsonrpc":"2.0","id":"m4","result":{}}"#,
        ]);
        let got = missing(&stdout, &methods, Edition::Current);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].method, "session/resume");
        assert_eq!(got[0].owner, CheckId::ResumeAcrossProcesses);
        // session/wait (m3) was not answered: undecided, not missing.
        let text = probe_trace(&methods);
        assert!(text.contains(r#""id":"m4","method":"shutdown""#), "{text}");
        crate::trace::Trace::parse(&text, "method-probe").unwrap();
    }
}
