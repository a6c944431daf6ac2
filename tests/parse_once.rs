//! On the `check` path each stdout line of the runtime is parsed once: by the child's reader,
//! into a typed [`Output`](dsh_conformance::wire::output::Output) that the trace matcher, the rule
//! checker, the probes and the reports all read. Each line the runtime reads is parsed once too,
//! by the rule checker ([`envelope`](dsh_conformance::wire::envelope())). Its own test binary, so that no other test's
//! parsing moves the process-wide counters.

use dsh_conformance::wire::envelope::envelopes_parsed;
use dsh_conformance::wire::json::tape_parses;
use dsh_conformance::wire::output::lines_parsed;
use dsh_conformance::{check, CheckOptions, CommandSpec, Verdict};

#[test]
fn each_stdout_line_is_parsed_once_on_the_check_path() {
    let runtime = CommandSpec::new(env!("CARGO_BIN_EXE_dsh-reference-runtime"));
    // The whole suite: frames of every kind, the probes, the stream rules.
    let opts = CheckOptions::new().jobs(2);
    let (lines0, tapes0, sent0) = (lines_parsed(), tape_parses(), envelopes_parsed());
    let report = check(&runtime, "reference", &opts).expect("the kit runs");
    let (lines, tapes) = (lines_parsed() - lines0, tape_parses() - tapes0);
    let sent = envelopes_parsed() - sent0;
    assert!(
        report
            .results
            .iter()
            .all(|r| r.verdict == Verdict::Pass || matches!(r.verdict, Verdict::Skip { .. })),
        "{}",
        report.human(false)
    );
    assert!(lines > 100, "only {lines} stdout lines were read");
    assert!(sent > 100, "only {sent} lines sent were classified");
    assert_eq!(
        tapes,
        lines + sent,
        "{lines} stdout lines were read, {sent} lines sent classified, and {tapes} JSON texts \
         parsed into a tape: every other parse is a line parsed twice"
    );
}
