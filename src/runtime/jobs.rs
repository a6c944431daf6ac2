//! A session's background jobs under the `sdk` profile (docs/CONTRACT.md#s13.6), as the release's
//! `@deepseek-ai/dsh-tool-jobs` answers `job_list`, `job_output` and `job_kill`: a bash call
//! promoted after its `timeoutMs`, or started with `run_in_background`, stays here until the
//! process ends; each read of `job_output` returns what is new since the last read.

use super::sandbox::{self, Ran, Running};
use serde_json::{json, Value};
use std::time::Duration;

/// The tools this module answers.
pub const TOOLS: &[&str] = &["job_list", "job_output", "job_kill"];

/// `job_output`'s wait when `wait: true` names no `timeout_ms`, and its cap (the release's
/// `waitTimeoutMs` and `maxWaitTimeoutMs`).
const WAIT_DEFAULT_MS: f64 = 30_000.0;
const WAIT_CAP_MS: f64 = 600_000.0;

/// One job: its `job/registered` data, its process, how far `job_output` read, and how it
/// settled.
pub struct Job {
    pub data: Value,
    proc: Box<dyn Running>,
    read: (usize, usize),
    settled: Option<(String, String)>,
}

impl Job {
    /// A job of `proc` registered as `data`, its output before `read` already seen.
    pub fn new(data: Value, proc: Box<dyn Running>, read: (usize, usize)) -> Job {
        Job {
            data,
            proc,
            read,
            settled: None,
        }
    }

    /// A job registered as `data` that settled before it ran, as `(status, detail)`.
    pub fn finished(data: Value, settled: (String, String)) -> Job {
        Job {
            data,
            proc: Box::new(NoProcess),
            read: (0, 0),
            settled: Some(settled),
        }
    }

    fn id(&self) -> &str {
        self.data["jobId"].as_str().unwrap_or_default()
    }

    /// Output since the last read, stdout then a `[stderr]` section; the read is consumed.
    fn delta(&mut self) -> String {
        let (out, err) = self.proc.output();
        let (o, e) = self.read;
        let text =
            |b: &[u8], from: usize| String::from_utf8_lossy(&b[from.min(b.len())..]).into_owned();
        let d = sandbox::streams(&text(&out, o), &text(&err, e));
        self.read = (out.len(), err.len());
        d
    }

    fn status_line(&self) -> String {
        match &self.settled {
            Some((s, d)) => format!("[status: {s}, {d}]"),
            None => "[status: running]".into(),
        }
    }

    fn status(&self) -> &str {
        self.settled.as_ref().map_or("running", |(s, _)| s)
    }

    /// Settles the job as `ran` says (`cause` `producer` or `kill`): its `job/settled` data.
    fn settle(&mut self, ran: &Ran, cause: &str, reason: Option<&str>, now: u64) -> Value {
        let (status, mut detail) = sandbox::outcome(ran);
        if let Some(r) = reason {
            detail = format!("{detail}; {r}");
        }
        let mut data = self.data.clone();
        data["finishedAt"] = json!(now);
        data["status"] = json!(status);
        data["cause"] = json!(cause);
        data["producerReported"] = json!(true);
        data["detail"] = json!(detail);
        self.settled = Some((status.into(), detail));
        data
    }

    /// Settles the job if its process ended on its own (its `job/settled` data then).
    fn refresh(&mut self, now: u64) -> Option<Value> {
        if self.settled.is_some() {
            return None;
        }
        let ran = self.proc.wait(Duration::ZERO)?;
        Some(self.settle(&ran, "producer", None, now))
    }
}

/// The process of a job that never ran.
struct NoProcess;

impl Running for NoProcess {
    fn output(&self) -> (Vec<u8>, Vec<u8>) {
        (Vec::new(), Vec::new())
    }
    fn wait(&mut self, _: Duration) -> Option<Ran> {
        Some(Ran::default())
    }
    fn terminate(&mut self) -> Ran {
        Ran::default()
    }
}

/// The `user/message` that tells the model a background job settled (`data`, its
/// `job/settled` data): the release's completion notice.
pub fn notice(data: &Value) -> Value {
    let s = |k: &str| data[k].as_str().unwrap_or_default().to_string();
    let status = format!("[status: {}, {}]", s("status"), s("detail"));
    let (kind, label) = (s("kind"), s("label"));
    let text = format!(
        "background job {} ({kind}: {label}) finished {status}. Read its output with job_output.",
        s("jobId")
    );
    let summary = bound_summary(&format!("{kind} {label} {status}"));
    super::events::user_message(
        json!([{"type":"text","text": text}]),
        json!({"kind":"tool-jobs","form":"notice","summary": summary}),
        super::events::new_id(),
    )
}

/// At most 120 UTF-16 units: else the first 119 and `…` (the release's context summary bound).
fn bound_summary(s: &str) -> String {
    let units: Vec<u16> = s.encode_utf16().collect();
    if units.len() <= 120 {
        return s.to_string();
    }
    String::from_utf16_lossy(&units[..119]) + "\u{2026}"
}

/// A session's jobs, in registration order.
#[derive(Default)]
pub struct Jobs(Vec<Job>);

/// A job tool's answer: its text, whether it is an error, and `job/settled` data to stream
/// before and after the result. `ended` are jobs the tool found ended on their own (the model
/// gets their completion notices); `before` a job the tool waited for (no notice: the release's
/// `awaited`).
#[derive(Default)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
    pub ended: Vec<Value>,
    pub before: Vec<Value>,
    pub after: Option<Value>,
}

fn error(text: String) -> Answer {
    Answer {
        text: format!("Error: {text}"),
        is_error: true,
        ..Answer::default()
    }
}

impl Jobs {
    /// Adds a job.
    pub fn push(&mut self, job: Job) {
        self.0.push(job);
    }

    /// Whether a job's process may still be running (nobody saw it end yet).
    pub fn running(&self) -> bool {
        self.0.iter().any(|j| j.settled.is_none())
    }

    /// Settles the jobs whose processes ended on their own since the last look: their
    /// `job/settled` data, in registration order.
    pub fn reap(&mut self, now: u64) -> Vec<Value> {
        self.0.iter_mut().filter_map(|j| j.refresh(now)).collect()
    }

    /// Runs job tool `tool` (its arguments checked against its schema) at `now`.
    pub fn run(&mut self, tool: &str, args: &Value, now: u64) -> Answer {
        let ended = self.reap(now);
        let a = if tool == "job_list" {
            Answer {
                text: self.list(),
                ..Answer::default()
            }
        } else {
            self.one(tool, args, now)
        };
        Answer { ended, ..a }
    }

    fn list(&self) -> String {
        if self.0.is_empty() {
            return "(no background jobs)".into();
        }
        let line = |j: &Job| {
            let label = j.data["label"].as_str().unwrap_or_default();
            format!("{} [bash] {} \u{2014} {label}", j.id(), j.status())
        };
        self.0.iter().map(line).collect::<Vec<_>>().join("\n")
    }

    /// `job_output` or `job_kill` of the job `args.job_id` names.
    fn one(&mut self, tool: &str, args: &Value, now: u64) -> Answer {
        let id = args["job_id"].as_str().unwrap_or_default();
        if id.is_empty() {
            return error(format!(
                "invalid job_id: expected a non-empty string, got {}",
                crate::wire::json::to_string(&args["job_id"])
            ));
        }
        let Some(job) = self.0.iter_mut().find(|j| j.id() == id) else {
            return error(format!("unknown job {id}"));
        };
        if tool == "job_output" {
            return output(job, args, now);
        }
        if job.settled.is_some() {
            let text = format!("job {id} had already finished {}", job.status_line());
            return Answer {
                text,
                ..Answer::default()
            };
        }
        let ran = job.proc.terminate();
        let reason = args["reason"].as_str();
        Answer {
            text: format!("requested cancellation of job {id}"),
            after: Some(job.settle(&ran, "kill", reason, now)),
            ..Answer::default()
        }
    }
}

/// `job_output`: after waiting when asked, what is new and the job's status.
fn output(job: &mut Job, args: &Value, now: u64) -> Answer {
    let mut before = Vec::new();
    if args["wait"] == json!(true) && job.settled.is_none() {
        let ms = args["timeout_ms"].as_f64().unwrap_or(WAIT_DEFAULT_MS);
        let ms = ms.clamp(0.0, WAIT_CAP_MS);
        if let Some(ran) = job.proc.wait(Duration::from_millis(ms as u64)) {
            before.push(job.settle(&ran, "producer", None, now));
        }
    }
    let delta = job.delta();
    let mut body = if delta.is_empty() {
        "(no new output)".to_string()
    } else {
        delta
    };
    if !body.ends_with('\n') {
        body.push('\n');
    }
    Answer {
        text: body + &job.status_line(),
        before,
        ..Answer::default()
    }
}

/// The text of a foreground call promoted to job `id` after `timeout_ms`, with the output so
/// far.
pub fn promoted(output: &str, timeout_ms: &str, id: &str) -> String {
    let mut text = output.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    format!("{text}[still running after {timeout_ms}ms; moved to background job {id}]\nThe command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill.")
}

/// How JavaScript prints the number `n` (integral values without a fraction).
pub fn js_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
