//! Protocol editions: the one definition every layer uses (the runtime, the suite, traces, the
//! fuzzer). An edition enters as text only at the edges (CLI flags, trace metadata) and is parsed
//! there, so a typo is an error, never a silently empty selection.

use std::fmt;
use std::str::FromStr;

/// Which era of the protocol a runtime speaks (docs/CONTRACT.md#s1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Edition {
    /// The 0.2.x release: 7 methods, initialize gating, queued overlapping prompts.
    #[default]
    Current,
    /// The 2026-08 sources: 3 methods, no gating, queued overlapping prompts.
    Aug2026,
    /// The run-to-settlement era: one in-flight prompt, `session.finished`, late `{accepted:true}`.
    Legacy,
}

impl Edition {
    /// Every edition, in the order of `--help`.
    pub const ALL: [Edition; 3] = [Edition::Current, Edition::Aug2026, Edition::Legacy];

    /// The name used on the command line and in traces.
    pub fn name(self) -> &'static str {
        match self {
            Edition::Current => "current",
            Edition::Aug2026 => "2026-08",
            Edition::Legacy => "legacy",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Edition::Current => 1,
            Edition::Aug2026 => 2,
            Edition::Legacy => 4,
        }
    }
}

/// An edition name that is none of `current`, `2026-08`, `legacy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEdition(pub String);

impl fmt::Display for UnknownEdition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown edition {:?} (expected current, 2026-08 or legacy)",
            self.0
        )
    }
}

impl std::error::Error for UnknownEdition {}

impl FromStr for Edition {
    type Err = UnknownEdition;
    fn from_str(s: &str) -> Result<Self, UnknownEdition> {
        Edition::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| UnknownEdition(s.to_owned()))
    }
}

impl fmt::Display for Edition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A set of editions (where a check applies), as a bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Editions(pub u8);

impl Editions {
    /// The 0.2.x release.
    pub const CURRENT: Editions = Editions(1);
    /// The 2026-08 repository state.
    pub const AUG2026: Editions = Editions(2);
    /// The run-to-settlement era.
    pub const LEGACY: Editions = Editions(4);
    /// All three.
    pub const ALL: Editions = Editions(7);
    /// `current` and `2026-08` (queued prompts, session.status).
    pub const QUEUED: Editions = Editions(3);

    /// Whether `e` is in the set.
    pub fn contains(self, e: Edition) -> bool {
        self.0 & e.bit() != 0
    }

    /// The members, in [`Edition::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Edition> {
        Edition::ALL.into_iter().filter(move |e| self.contains(*e))
    }

    /// The names in the set, space-separated.
    pub fn names(self) -> String {
        self.iter().map(Edition::name).collect::<Vec<_>>().join(" ")
    }
}

impl From<Edition> for Editions {
    fn from(e: Edition) -> Editions {
        Editions(e.bit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_typos_are_errors() {
        for e in Edition::ALL {
            assert_eq!(e.name().parse::<Edition>(), Ok(e));
        }
        let err = "curent".parse::<Edition>().unwrap_err();
        assert!(err.to_string().contains("\"curent\""), "{err}");
    }

    #[test]
    fn edition_sets_name_their_members() {
        assert_eq!(Editions::QUEUED.names(), "current 2026-08");
        assert!(Editions::LEGACY.contains(Edition::Legacy));
        assert!(!Editions::LEGACY.contains(Edition::Current));
        assert_eq!(Editions::from(Edition::Aug2026), Editions::AUG2026);
    }
}
