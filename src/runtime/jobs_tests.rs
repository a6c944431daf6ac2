//! The job tools' answers over a scripted process (recorded texts: `sandbox_bash_jobs`).

use super::*;

/// A process that runs until terminated (then SIGTERM) or until `end` says it exited.
#[derive(Default)]
struct Fake {
    out: Vec<u8>,
    err: Vec<u8>,
    end: Option<Ran>,
}

impl Running for Fake {
    fn output(&self) -> (Vec<u8>, Vec<u8>) {
        (self.out.clone(), self.err.clone())
    }
    fn wait(&mut self, _: Duration) -> Option<Ran> {
        self.end.clone()
    }
    fn terminate(&mut self) -> Ran {
        self.end.get_or_insert(Ran {
            signal: Some("SIGTERM".into()),
            ..Ran::default()
        });
        self.end.clone().unwrap()
    }
}

fn job(id: &str, label: &str, p: Fake) -> Job {
    Job::new(
        json!({"jobId": id,"label": label,"kind":"bash"}),
        Box::new(p),
        (0, 0),
    )
}

fn run(jobs: &mut Jobs, tool: &str, args: Value) -> Answer {
    jobs.run(tool, &args, 7)
}

#[test]
fn a_running_job_is_listed_read_and_killed_as_the_release_answers() {
    let mut jobs = Jobs::default();
    assert_eq!(
        run(&mut jobs, "job_list", json!({})).text,
        "(no background jobs)"
    );
    let bg = Fake {
        out: b"bg\n".to_vec(),
        ..Fake::default()
    };
    jobs.push(job("bash-1", "echo bg; sleep 30", bg));
    assert_eq!(
        run(&mut jobs, "job_list", json!({})).text,
        "bash-1 [bash] running \u{2014} echo bg; sleep 30"
    );
    let read = |jobs: &mut Jobs| run(jobs, "job_output", json!({"job_id":"bash-1"})).text;
    assert_eq!(read(&mut jobs), "bg\n[status: running]");
    assert_eq!(read(&mut jobs), "(no new output)\n[status: running]");
    let kill = run(
        &mut jobs,
        "job_kill",
        json!({"job_id":"bash-1","reason":"not needed"}),
    );
    assert_eq!(kill.text, "requested cancellation of job bash-1");
    let settled = kill.after.expect("a kill settles the job after the result");
    assert_eq!(settled["status"], "killed");
    assert_eq!(settled["cause"], "kill");
    assert_eq!(settled["detail"], "signal: SIGTERM; not needed");
    assert_eq!(settled["finishedAt"], 7);
    assert_eq!(
        read(&mut jobs),
        "(no new output)\n[status: killed, signal: SIGTERM; not needed]"
    );
    let again = run(&mut jobs, "job_kill", json!({"job_id":"bash-1"}));
    assert_eq!(
        again.text,
        "job bash-1 had already finished [status: killed, signal: SIGTERM; not needed]"
    );
    assert!(again.after.is_none() && !again.is_error);
}

#[test]
fn a_job_that_ended_on_its_own_settles_when_a_tool_looks() {
    let mut jobs = Jobs::default();
    let done = Fake {
        out: b"quick".to_vec(),
        err: b"warn\n".to_vec(),
        end: Some(Ran {
            exit_code: Some(0),
            ..Ran::default()
        }),
    };
    jobs.push(job("bash-2", "echo quick", done));
    let a = run(&mut jobs, "job_output", json!({"job_id":"bash-2"}));
    assert_eq!(
        a.text,
        "quick\n[stderr]\nwarn\n[status: completed, exit code: 0]"
    );
    assert_eq!(a.ended.len(), 1, "its job/settled comes before the result");
    assert_eq!(a.ended[0]["cause"], "producer");
    assert!(a.before.is_empty(), "nobody waited for it");
    assert!(run(&mut jobs, "job_list", json!({})).ended.is_empty());
    assert!(!jobs.running());
}

#[test]
fn a_job_that_ends_is_reaped_once() {
    let mut jobs = Jobs::default();
    let done = Fake {
        out: Vec::new(),
        err: Vec::new(),
        end: Some(Ran {
            exit_code: Some(3),
            ..Ran::default()
        }),
    };
    jobs.push(job("bash-4", "exit 3", done));
    assert!(jobs.running(), "nobody looked yet");
    let reaped = jobs.reap(9);
    assert_eq!(reaped.len(), 1);
    assert_eq!(
        (
            &reaped[0]["status"],
            &reaped[0]["detail"],
            &reaped[0]["finishedAt"]
        ),
        (&json!("completed"), &json!("exit code: 3"), &json!(9))
    );
    assert!(!jobs.running());
    assert!(jobs.reap(10).is_empty(), "settled once");
}

#[test]
fn unknown_and_empty_job_ids_are_the_releases_errors() {
    let mut jobs = Jobs::default();
    for tool in ["job_output", "job_kill"] {
        let a = run(&mut jobs, tool, json!({"job_id":"nope"}));
        assert_eq!(
            (a.text.as_str(), a.is_error),
            ("Error: unknown job nope", true)
        );
    }
    let a = run(&mut jobs, "job_output", json!({"job_id":""}));
    assert_eq!(
        a.text,
        "Error: invalid job_id: expected a non-empty string, got \"\""
    );
}

#[test]
fn a_promoted_call_names_its_job_and_wait() {
    assert_eq!(
        promoted("early\n", "400", "bash-3"),
        "early\n[still running after 400ms; moved to background job bash-3]\nThe command keeps running in the background. You will be notified when it finishes; read newer output with job_output, stop it with job_kill."
    );
    assert!(promoted("", "400", "j").starts_with("[still running after 400ms;"));
    assert!(promoted("x", "1", "j").starts_with("x\n[still"));
    assert_eq!(
        (js_number(400.0), js_number(0.5)),
        ("400".into(), "0.5".into())
    );
}
