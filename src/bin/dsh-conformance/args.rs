//! Value parsers the subcommands' flags share.

use dsh_conformance::trace::Trace;
use std::time::Duration;

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
}
