//! `dsh-conformance model-stub`: the stub in the foreground prints the environment to export,
//! answers a request made with it, logs the request, and ends with exit 0 on SIGINT.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn the_foreground_stub_prints_its_environment_answers_and_logs_each_request() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-conformance"))
        .args(["model-stub", "--seconds", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut env = std::collections::HashMap::new();
    // DEEPSEEK_BASE_URL, DEEPSEEK_API_KEY, OPENAI_BASE_URL, OPENAI_API_KEY, NO_PROXY, no_proxy.
    for _ in 0..6 {
        let mut l = String::new();
        out.read_line(&mut l).unwrap();
        let (k, v) = l
            .trim()
            .strip_prefix("export ")
            .and_then(|kv| kv.split_once('='))
            .unwrap_or_else(|| panic!("not an export line: {l:?}"));
        env.insert(k.to_owned(), v.trim_matches('\'').to_owned());
    }
    let url = &env["DEEPSEEK_BASE_URL"];
    let key = &env["DEEPSEEK_API_KEY"];
    assert_eq!(env["NO_PROXY"], "127.0.0.1,localhost");
    assert_eq!(env["OPENAI_BASE_URL"], format!("{url}/v1"));
    assert_eq!(&env["OPENAI_API_KEY"], key);
    let addr = url
        .strip_prefix("http://")
        .expect("an http URL on 127.0.0.1");
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let body = serde_json::json!({"model": "deepseek-v4-flash", "stream": true, "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "reply: from the foreground"}]}]})
    .to_string();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nx-api-key: {key}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The reply streams in chunks.
    assert!(
        answer.contains(r#""text":"from the ""#) && answer.contains(r#""text":"foreground""#),
        "{answer}"
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        err.contains("model-stub: #1 "),
        "the request is logged: {err}"
    );
    assert!(err.contains("1 request(s) served"), "{err}");
}
