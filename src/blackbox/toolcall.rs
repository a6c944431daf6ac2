//! Tool calls for the black-box fuzzer (`fuzz --profile P`): prompts whose `call:` directives
//! make the model call every tool profile `P` offers (the reference's own roster,
//! `runtime::profile`), with valid inputs (paths inside the session's workspace, files the
//! sequence wrote earlier, small bounded commands) and invalid ones (a required property
//! missing, a property of the wrong type, a path outside the workspace, a tool not offered).
//!
//! The calls go to one session of the sequence's own (`tools`), whose working directory a
//! `working-directory/set` first moves to the case's directory (`{{cwd}}`, which the executor
//! writes as the case's path, as traces do): no call touches anything outside the case's
//! directories. Nothing leaves the machine: `web_fetch` gets local or malformed URLs, and
//! `web_search` (which the release sends to the DeepSeek endpoint) only invalid inputs.

mod inputs;

use super::gen::Rng;
use crate::directive::Directive;
use crate::ops::{BlockGen, BlocksGen, IdGen, Op, PathGen, SessionGen, Small};
use crate::runtime::{Config, Profile};
pub use inputs::Kind;

/// The session the calls go to (written under the sequence's session prefix).
pub const TOOL_SESSION: &str = "tools";
/// The placeholder the executor replaces with the case's working directory.
pub const CWD_PLACEHOLDER: &str = "{{cwd}}";
/// Tool calls one sequence makes at most.
const MAX_CALLS: u64 = 6;
/// Tools no profile offers (called with `call!:`, as are the `sdk` tools another profile does
/// not offer).
const NOBODYS: [&str; 2] = ["no_such_tool", "str_replace_based_edit_tool"];

/// The tools `profile` offers, in the order its requests list them: the reference's roster.
pub fn offered(profile: Profile) -> Vec<String> {
    let cfg = Config {
        profile,
        ..Config::default()
    };
    crate::runtime::profile::roster(&cfg)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// What the generator knows of the workspace so far (what earlier calls of the sequence made).
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    /// The case number (file names carry it: sequences on one process share its directory).
    pub case: u64,
    /// Files written so far (relative to the workspace).
    pub files: Vec<String>,
    /// Directories made so far.
    pub dirs: Vec<String>,
}

/// One generated call: its tool, what kind of input it has, and its directive.
#[derive(Debug, Clone)]
pub struct Call {
    /// The tool named.
    pub tool: String,
    /// The kind of input.
    pub kind: Kind,
    /// The directive (`call:` or `call!:`).
    pub directive: Directive,
}

/// A call of `tool` with an input of `kind` (a kind the tool has no input for falls back to a
/// valid one), updating `ws` with what a valid call makes.
pub fn call(tool: &str, kind: Kind, rng: &mut Rng, ws: &mut Workspace) -> Call {
    let (kind, input) = inputs::input(tool, kind, rng, ws);
    let input = input.to_string();
    let tool = tool.to_owned();
    // A tool not offered is called with `call!:` (the model calls it anyway; `call:` would make
    // the stub refuse the request, ending the turn in error and stalling the session's queue).
    let directive = if kind == Kind::Unoffered {
        Directive::CallAny {
            tool: tool.clone(),
            input,
        }
    } else {
        Directive::Call {
            tool: tool.clone(),
            input,
        }
    };
    Call {
        tool,
        kind,
        directive,
    }
}

/// The tools a profile offering `offered` does not: the `sdk` ones it lacks and a few no profile
/// offers.
pub fn unoffered(offered: &[String]) -> Vec<&'static str> {
    crate::runtime::profile::SDK_TOOLS
        .iter()
        .chain(NOBODYS.iter())
        .filter(|t| !offered.iter().any(|o| o == *t))
        .copied()
        .collect()
}

/// A random call among the tools `offered` (one in `offered.len() + 1` of a tool not offered).
pub fn any_call(offered: &[String], rng: &mut Rng, ws: &mut Workspace) -> Call {
    let n = offered.len() as u64;
    let i = rng.below(n + 1);
    if i == n {
        let not = unoffered(offered);
        let tool = not[rng.below(not.len() as u64) as usize];
        return call(tool, Kind::Unoffered, rng, ws);
    }
    let kind = match rng.below(20) {
        0..=10 => Kind::Valid,
        11..=13 => Kind::Missing,
        14..=16 => Kind::WrongType,
        _ => Kind::Outside,
    };
    call(&offered[i as usize], kind, rng, ws)
}

/// The prompt op carrying `d` to the tool session.
pub fn prompt(d: Directive, n: usize) -> Op {
    Op::Prompt {
        id: IdGen::Str(Small(format!("tool-{n}"))),
        session: tool_session(),
        blocks: BlocksGen::List(vec![BlockGen::Text(d)]),
    }
}

/// The op that moves the tool session into the case's directory.
pub fn enter_workspace() -> Op {
    Op::WdSet {
        id: IdGen::Str(Small("tool-cwd".into())),
        session: tool_session(),
        path: PathGen::Any(Small(CWD_PLACEHOLDER.into())),
    }
}

fn tool_session() -> SessionGen {
    SessionGen::Any(Small(TOOL_SESSION.into()))
}

/// Inserts tool calls into `ops` (after its first op, a leading `initialize`, when there is
/// one): the workspace move, then one to six calls at random places after it, in order.
pub fn insert(ops: &mut Vec<Op>, offered: &[String], case: u64, rng: &mut Rng) {
    let mut ws = Workspace {
        case,
        ..Workspace::default()
    };
    let start = usize::from(matches!(ops.first(), Some(Op::Initialize { .. })));
    let mut at = start + rng.below((ops.len() - start) as u64 + 1) as usize;
    ops.insert(at, enter_workspace());
    for n in 0..(1 + rng.below(MAX_CALLS)) as usize {
        at += 1 + rng.below((ops.len() - at) as u64) as usize;
        let c = any_call(offered, rng, &mut ws);
        ops.insert(at, prompt(c.directive, n));
    }
}

/// Replaces the [`CWD_PLACEHOLDER`] in rendered bytes with `cwd` (JSON-escaped).
pub fn fill_cwd(bytes: &[u8], cwd: &std::path::Path) -> Vec<u8> {
    let needle = CWD_PLACEHOLDER.as_bytes();
    if !bytes.windows(needle.len()).any(|w| w == needle) {
        return bytes.to_vec();
    }
    let quoted = serde_json::Value::from(cwd.to_string_lossy()).to_string();
    let path = &quoted[1..quoted.len() - 1];
    String::from_utf8_lossy(bytes)
        .replace(CWD_PLACEHOLDER, path)
        .into_bytes()
}

#[cfg(test)]
mod tests;
