use dsh_conformance::{check, CheckOptions, CommandSpec, Connection, RuntimeConfig};
use std::time::Duration;

#[test]
fn the_runtime_this_crate_builds_keeps_the_contract() {
    let cmd = CommandSpec::new(env!("CARGO_BIN_EXE_my-runtime")).arg("--profile").arg("sdk");
    let report = check(&cmd, "my-runtime", &CheckOptions::new().jobs(2)).expect("the kit runs");
    report.assert_conforms();
}

#[test]
fn a_client_talks_to_the_in_process_runtime() {
    let mut rt = Connection::memory(RuntimeConfig::default()).expect("start");
    let init = serde_json::json!({"cwd": "/", "provider": "deepseek-official", "model": "m"});
    let answer = rt.request(1.into(), "initialize", init, Duration::from_secs(5)).unwrap();
    assert!(answer.response["result"]["serverInfo"].is_object());
}
