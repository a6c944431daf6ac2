//! Value parsers the subcommands' flags share.

use dsh_conformance::trace::syntax::{self, MAX_DURATION};
use std::time::Duration;

/// A duration flag: a number with a unit (`500ms`, `10s`, `2m`, `1h`, as traces write them) or a
/// bare number of seconds (`10`, `0.5`); more than zero and at most [`MAX_DURATION`].
pub(crate) fn duration(s: &str) -> Result<Duration, String> {
    match duration_or_zero(s)? {
        Duration::ZERO => Err(format!("`{s}`: the duration must be more than zero")),
        d => Ok(d),
    }
}

/// As [`duration`], zero allowed (for flags where 0 means "no bound").
pub(crate) fn duration_or_zero(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let bare = t
        .parse::<f64>()
        .ok()
        .filter(|_| !t.ends_with(['s', 'm', 'h']));
    let d = match bare {
        Some(secs) => syntax::duration(&format!("{secs}s")),
        None => syntax::duration(t),
    };
    d.ok_or_else(|| {
        format!(
            "`{s}` is not a duration: write a number of seconds or one with a unit (500ms, 10s, \
             2m, 1h), from 0 to {} s",
            MAX_DURATION.as_secs()
        )
    })
}

/// The default of every `--jobs`: the number of CPUs, at most 8 (each job is a runtime process;
/// most of a check is waiting, so this many keeps a machine busy without crowding it).
pub(crate) fn default_jobs() -> u16 {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    u16::try_from(cpus.min(8)).unwrap_or(1)
}

/// `NAME=VALUE`, for clap.
pub(crate) fn env_pair(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or("expected NAME=VALUE")?;
    if k.is_empty() {
        return Err("expected NAME=VALUE".into());
    }
    Ok((k.to_owned(), v.to_owned()))
}

/// `--processes` of `check` and `fuzz` (each says what its `auto` decides by).
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Processes {
    /// `shared` for a runtime slow to boot, else `fresh`.
    Auto,
    /// A fresh process for every case or sequence.
    Fresh,
    /// Isolated cases or sequences share a process.
    Shared,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_env_pairs_parse_as_the_flags_document() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(duration("2"), Ok(Duration::from_secs(2)), "bare: seconds");
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        for bad in [
            "0",
            "0s",
            "-1",
            "NaN",
            "inf",
            "1e20",
            "1e30s",
            "",
            "ten",
            "5 parsecs",
        ] {
            assert!(duration(bad).is_err(), "{bad}");
        }
        assert_eq!(duration_or_zero("0"), Ok(Duration::ZERO));
        assert_eq!(env_pair("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert!(env_pair("=x").is_err() && env_pair("x").is_err());
    }
}

/// A report's (or a list's) format: every subcommand that writes one takes these.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    Human,
    Json,
    Junit,
    /// The HTML page `report --html` makes, for this run alone.
    Html,
}
