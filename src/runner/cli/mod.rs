//! The `replay`, `record` and `import` subcommands as library functions. Each has its own
//! argument struct ([`ReplayArgs`], [`RecordArgs`], [`ImportArgs`]: the binary uses them as its
//! subcommands, so each `--help` is its own) and a `run` that returns the process exit code
//! (0 pass, 1 findings, 2 usage error or a runtime that cannot be started). [`replay()`],
//! [`record()`] and [`import()`] parse the arguments after the subcommand name, for callers
//! that hold them as strings.

mod import;
mod record;
mod replay;

pub use import::ImportArgs;
pub use record::RecordArgs;
pub use replay::ReplayArgs;

use crate::trace::Trace;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `dsh-conformance replay …` from the arguments after `replay`.
pub fn replay(args: &[String]) -> i32 {
    parse::<ReplayArgs>("replay", args).map_or_else(|code| code, |a| a.run())
}

/// `dsh-conformance record …` from the arguments after `record`.
pub fn record(args: &[String]) -> i32 {
    parse::<RecordArgs>("record", args).map_or_else(|code| code, |a| a.run())
}

/// `dsh-conformance import …` from the arguments after `import`.
pub fn import(args: &[String]) -> i32 {
    parse::<ImportArgs>("import", args).map_or_else(|code| code, |a| a.run())
}

/// Parses `args` as the subcommand `name`; on an error or `--help`, prints what clap says and
/// returns the exit code (2 for an error, 0 for help).
fn parse<A: clap::Args + clap::FromArgMatches>(
    name: &'static str,
    args: &[String],
) -> Result<A, i32> {
    let bin = format!("dsh-conformance {name}");
    let cmd = A::augment_args(clap::Command::new(name).bin_name(bin));
    let argv = std::iter::once(name.to_owned()).chain(args.iter().cloned());
    match cmd
        .try_get_matches_from(argv)
        .and_then(|m| A::from_arg_matches(&m))
    {
        Ok(a) => Ok(a),
        Err(e) => {
            let _ = e.print();
            Err(if e.use_stderr() { 2 } else { 0 })
        }
    }
}

/// A duration as traces write it (`500ms`, `10s`, `2m`), for clap.
pub(crate) fn duration(s: &str) -> Result<Duration, String> {
    let t = Trace::parse(&format!("# timeout: {s}"), "argument").map_err(|e| e.msg)?;
    t.meta.timeout.ok_or_else(|| format!("bad duration `{s}`"))
}

/// `NAME=VALUE`, for clap.
pub(crate) fn env_pair(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or("expected NAME=VALUE")?;
    if k.is_empty() {
        return Err("expected NAME=VALUE".into());
    }
    Ok((k.to_owned(), v.to_owned()))
}

/// Collects `.trace` files from files and directories (sorted within each directory).
pub fn collect_traces(paths: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let p = Path::new(p);
        if p.is_dir() {
            let mut stack = vec![p.to_path_buf()];
            let mut found = Vec::new();
            while let Some(d) = stack.pop() {
                let rd = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                for e in rd.flatten() {
                    let q = e.path();
                    if q.is_dir() {
                        stack.push(q);
                    } else if q.extension().is_some_and(|x| x == "trace") {
                        found.push(q);
                    }
                }
            }
            found.sort();
            out.extend(found);
        } else if p.is_file() {
            out.push(p.to_path_buf());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

/// The last `max` lines of a runtime's stderr tail, indented under a heading that gives the
/// total written (empty when the runtime wrote nothing on stderr).
pub fn stderr_block(tail: &str, total: usize, max: usize) -> String {
    use std::fmt::Write as _;
    let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut s = format!("  stderr tail ({total} bytes total):\n");
    for l in &lines[lines.len().saturating_sub(max)..] {
        let _ = writeln!(s, "    {}", crate::trace::explain::clip(l, 300));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_env_pairs_parse_as_the_flags_document() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2s"), Ok(Duration::from_secs(2)));
        assert!(duration("2").is_err());
        assert_eq!(env_pair("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert!(env_pair("=x").is_err() && env_pair("x").is_err());
    }

    #[test]
    fn the_stderr_block_keeps_the_last_lines_and_says_how_much_there_was() {
        assert_eq!(stderr_block("", 0, 5), "");
        let b = stderr_block("one\ntwo\n\nthree\n", 15, 2);
        assert_eq!(b, "  stderr tail (15 bytes total):\n    two\n    three\n");
    }
}
