//! `dsh-conformance model-stub`: the stub in the foreground, for driving a real runtime (or a
//! client app on one) keyless outside `check --model-stub`. It prints the environment to export on
//! stdout, one line per request on stderr as they arrive, and ends on SIGINT/SIGTERM (exit 0) or
//! after `--seconds`.

use super::{Config, ModelStub};
use std::io::Write;
use std::time::{Duration, Instant};

/// The shell lines that point a runtime at `stub` (`export NAME='value'`).
pub fn exports(stub: &ModelStub) -> String {
    let mut out = String::new();
    for (k, v) in stub.env().into_iter().chain([
        ("NO_PROXY".to_owned(), "127.0.0.1,localhost".to_owned()),
        ("no_proxy".to_owned(), "127.0.0.1,localhost".to_owned()),
    ]) {
        out.push_str(&format!("export {k}='{v}'\n"));
    }
    out
}

/// Serves until a signal or `seconds` (when given); returns the exit code.
pub fn serve(port: u16, seconds: Option<f64>) -> i32 {
    let stub = match ModelStub::start_with(Config {
        port,
        ..Config::default()
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("dsh-conformance model-stub: cannot listen on 127.0.0.1:{port}: {e}");
            return 2;
        }
    };
    if let Err(e) = crate::sys::catch(&[libc::SIGINT, libc::SIGTERM], crate::sys::record, false) {
        eprintln!("dsh-conformance model-stub: cannot catch signals ({e}): stop it with SIGKILL");
    }
    crate::out!("{}", exports(&stub));
    let _ = std::io::stdout().flush();
    eprintln!(
        "dsh-conformance model-stub: serving the scripted model on {} (prompts starting `reply: …`, \
         `tool: CMD`, `maxtokens`, `error500` … see docs/CONTRACT.md#s13.5); Ctrl-C ends it",
        stub.base_url()
    );
    let until = seconds.map(|s| Instant::now() + Duration::from_secs_f64(s));
    let mut logged = 0;
    loop {
        let requests = stub.requests();
        for r in &requests[logged.min(requests.len())..] {
            eprintln!("model-stub: {}", r.summary());
        }
        logged = requests.len();
        if crate::sys::caught().is_some() || until.is_some_and(|u| Instant::now() >= u) {
            eprintln!("dsh-conformance model-stub: {logged} request(s) served; stopping");
            return 0;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
