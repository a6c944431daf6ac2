//! The mutants of how frames are written: line ends, spacing, member order, pretty-printing.

use super::super::frames::{reverse_members, s};
use crate::mutants::MutantKind::{self, self as M};
use serde_json::Value;

/// The lines frame `v` is written as under `kind`; `None`: written as usual.
pub(super) fn encoded(kind: MutantKind, v: &mut Value) -> Option<Vec<String>> {
    match kind {
        M::CrlfOutput => Some(vec![format!("{}\r", s(v))]),
        M::SpacedOutput => Some(vec![s(v).replacen("\"jsonrpc\":", "\"jsonrpc\": ", 1)]),
        M::ReorderedMembers => {
            reverse_members(v);
            Some(vec![s(v)])
        }
        M::PrettyPrinted => Some(
            serde_json::to_string_pretty(&*v)
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect(),
        ),
        _ => None,
    }
}
