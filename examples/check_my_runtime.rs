//! What a runtime author puts in their own `tests/`: the whole conformance suite against their
//! runtime binary, failing with the report when a MUST rule is broken.
//!
//! `cargo run --example check_my_runtime -- <runtime command…>`; with no command, the reference
//! runtime built beside this example (`cargo build` first).

use dsh_conformance::{check, CheckOptions, CommandSpec};

fn main() {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        let exe = std::env::current_exe().expect("own path");
        let dir = exe
            .parent()
            .and_then(|d| d.parent())
            .expect("target/<profile>");
        argv.push(dir.join("dsh-reference-runtime").display().to_string());
    }
    let cmd = CommandSpec::from_argv(&argv).expect("a runtime command");
    let opts = CheckOptions::new().jobs(2);
    let report = check(&cmd, &argv.join(" "), &opts).expect("the kit itself runs");
    print!("{}", report.human(false));
    // Panics with the report (root causes first) unless every check that fails a run passed.
    report.assert_conforms();
}
