use dsh_conformance::{check, CheckOptions, CommandSpec, Connection, RuntimeConfig};
use std::time::Duration;

#[test]
fn the_runtime_binary_keeps_the_contract() {
    let cmd = CommandSpec::new("dsh-conformance").arg("runtime"); // your runtime's command line
    let report = check(&cmd, "reference", &CheckOptions::default()).expect("the kit runs");
    assert_eq!(report.exit_code(), 0, "{}", report.human(false));
}

#[test]
fn a_client_talks_to_the_in_process_runtime() {
    let mut rt = Connection::memory(RuntimeConfig::default()).expect("start");
    let init = serde_json::json!({"cwd": "/", "provider": "deepseek-official", "model": "m"});
    let answer = rt.request(1.into(), "initialize", init, Duration::from_secs(5)).unwrap();
    assert!(answer.response["result"]["serverInfo"].is_object());
}
