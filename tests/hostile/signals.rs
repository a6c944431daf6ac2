//! Subcommands other than `check` on SIGINT/SIGTERM: they end at once with 128 + N, their
//! runtimes killed (setsid grandchildren included) and their temp directories removed (`fuzz`
//! after writing its summary and findings.json, as `check` writes its partial report).

use super::{kit, runtime};
use std::time::Duration;

#[test]
fn replay_record_fuzz_and_bench_leave_nothing_behind_when_interrupted() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/checks/response.answered.trace"
    );
    let rt = runtime("init_then.py");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "hostile-rec-{}.trace",
        uuid::Uuid::new_v4().simple()
    ));
    let out = out.to_str().unwrap();
    for (args, sig) in [
        (vec!["replay", trace, "--", &rt, "setsid"], libc::SIGINT),
        (
            vec!["record", "--script", trace, "-o", out, "--", &rt, "setsid"],
            libc::SIGTERM,
        ),
        (
            vec!["fuzz", "--seconds", "60", "--", &rt, "setsid"],
            libc::SIGINT,
        ),
        // The load generator's runtime homes (dsh-loadgen-home-*) go too.
        (
            vec!["bench", "--cold-runs", "5000", "--sessions", "1"],
            libc::SIGTERM,
        ),
    ] {
        let r = kit(&args, Some((Duration::from_secs(2), sig)));
        r.assert_clean(128 + sig, Duration::from_secs(30));
        // `fuzz` stops as `check` does: its summary (and findings.json) first.
        let said = match args[0] {
            "fuzz" => "the summary and findings.json follow",
            _ => "temp directories removed",
        };
        assert!(r.stderr.contains(said), "{args:?}: {r}");
    }
}
