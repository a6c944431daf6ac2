//! Structure-aware client operations (`arbitrary` derive) and their rendering as wire bytes.
//!
//! An [`Op`] is what a client (or a hostile peer) might write: well-formed requests of every
//! method with fuzzed params and ids, prompts carrying model directives to a few sessions, raw
//! text, notifications, responses to ids nobody asked about, time passing, EOF. The same ops drive
//! the in-memory reference runtime (the `runtime_session` fuzz target) and any runtime over
//! stdio (the black-box fuzzer, [`crate::blackbox`]). Below both: this module knows the wire's
//! JSON writer and the directive language ([`crate::directive`]), nothing above them.
//!
//! The op types are here, their rendering as bytes in `render`, the generation of directives in
//! `prompt`.

mod prompt;
mod render;

pub use render::Renderer;

pub use crate::directive::Directive;
use arbitrary::Arbitrary;

/// Longest string taken from the fuzzer for names, texts and paths.
pub(crate) const SMALL: usize = 40;
/// Deepest nesting of generated values and directives.
pub(crate) const MAX_NEST: usize = 6;

/// A string kept short.
#[derive(Debug, Clone, PartialEq)]
pub struct Small(pub String);

impl<'a> Arbitrary<'a> for Small {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        // Lossy, so that invalid UTF-8 from the fuzzer still yields a string (and U+FFFD).
        let len = u.int_in_range(0..=SMALL)?.min(u.len());
        Ok(Small(String::from_utf8_lossy(u.bytes(len)?).into_owned()))
    }
}

/// One thing written to the runtime.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    /// `session/prompt` with content blocks carrying model directives.
    Prompt {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
        /// `contentBlocks`.
        blocks: BlocksGen,
    },
    /// `initialize`.
    Initialize {
        /// Request id.
        id: IdGen,
        /// `cwd`.
        cwd: PathGen,
        /// `provider`.
        provider: ProviderGen,
        /// `maxTokens` (absent when `None`).
        max_tokens: Option<NumGen>,
        /// `reasoningEffort` (absent when `None`).
        effort: Option<ValGen>,
    },
    /// `session/wait`.
    Wait {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
    },
    /// `session/resume`.
    Resume {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
    },
    /// `session/working-directory/get`.
    WdGet {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
    },
    /// `session/working-directory/set`.
    WdSet {
        /// Request id.
        id: IdGen,
        /// `sessionId`.
        session: SessionGen,
        /// `path`.
        path: PathGen,
    },
    /// `shutdown`.
    Shutdown {
        /// Request id.
        id: IdGen,
    },
    /// A request of any method with any params (`params` may be any JSON, or absent).
    Request {
        /// Request id.
        id: IdGen,
        /// `method`.
        method: MethodGen,
        /// `params`.
        params: Option<ValGen>,
    },
    /// A notification (no id): must produce no output.
    Notification {
        /// `method`.
        method: MethodGen,
        /// `params`.
        params: Option<ValGen>,
    },
    /// A response to an id the runtime never used: must produce no output.
    Response {
        /// `id`.
        id: IdGen,
        /// `error` member instead of `result`.
        error: bool,
        /// The result or error value.
        value: ValGen,
    },
    /// Raw text, written as is (it may lack a newline and merge with the next op's line).
    Raw(RawGen),
    /// Virtual time passes (milliseconds); scheduled work runs.
    Advance(u16),
    /// Stdin closes.
    Eof,
    /// The runtime process is replaced by a new one on the same `DSH_HOME` (persisted sessions
    /// can then be resumed).
    Restart,
}

/// A request id, spelled as JSON text.
#[derive(Arbitrary, Debug, Clone)]
pub enum IdGen {
    /// A small integer.
    Num(u16),
    /// A short string.
    Str(Small),
    /// The previous op's id again (duplicate ids are legal; each still gets its answer).
    Again,
    /// `0`.
    Zero,
    /// `""`.
    Empty,
    /// `1.5`.
    Float,
    /// `-0`.
    NegZero,
    /// `1e400` (Infinity: echoed as `null`).
    Inf,
    /// `12345678901234567890` (echoed as `12345678901234567000`).
    Big,
    /// `null`: makes the frame a notification.
    Null,
    /// `true`: makes the frame a notification.
    Bool,
}

/// A `sessionId` member.
#[derive(Arbitrary, Debug, Clone)]
pub enum SessionGen {
    /// One of a few ids, so that ops meet on the same sessions.
    Pick(u8),
    /// `""` (accepted by prompt; the real runtime's turn then fails).
    Empty,
    /// Absent.
    Missing,
    /// Path-like ids.
    Odd(OddSession),
    /// Any short string.
    Any(Small),
    /// A number instead of a string.
    Number(i8),
}

/// Session ids that look like paths.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum OddSession {
    /// `.`
    Dot,
    /// `..`
    DotDot,
    /// `a/b`
    Slash,
    /// `../x`
    Escape,
    /// `s1 ` (trailing space)
    Space,
}

/// The `contentBlocks` member.
#[derive(Arbitrary, Debug, Clone)]
pub enum BlocksGen {
    /// An array of blocks.
    List(Vec<BlockGen>),
    /// Absent (the real runtime fails after creating the session).
    Missing,
    /// Not an array.
    Other(ValGen),
}

/// One content block.
#[derive(Arbitrary, Debug, Clone)]
pub enum BlockGen {
    /// `{"type":"text","text":<directive>}`: the directive's text ([`crate::directive`]'s
    /// grammar, generated by `prompt`).
    Text(Directive),
    /// An image block, with or without `data`.
    Image {
        /// Carries `data` (needs an attachment store).
        data: bool,
    },
    /// A text block whose `text` is not a string.
    BadText(ValGen),
    /// Any other block value.
    Other(ValGen),
}

/// A path for `cwd` / `path`.
#[derive(Arbitrary, Debug, Clone)]
pub enum PathGen {
    /// `/`.
    Root,
    /// `/tmp`.
    Tmp,
    /// `.`.
    Dot,
    /// `..`.
    DotDot,
    /// `""`.
    Empty,
    /// A directory that does not exist.
    Missing,
    /// Any short string.
    Any(Small),
    /// Not a string.
    NotString(ValGen),
    /// Absent.
    Absent,
}

/// `provider` of `initialize`.
#[derive(Arbitrary, Debug, Clone)]
pub enum ProviderGen {
    /// `deepseek-official`.
    Official,
    /// Another provider (no adapter).
    Other(Small),
    /// Absent.
    Absent,
}

/// A number for `maxTokens`.
#[derive(Arbitrary, Debug, Clone)]
pub enum NumGen {
    /// A small positive integer.
    Small(u16),
    /// `0`.
    Zero,
    /// `-1`.
    Neg,
    /// `1.5`.
    Frac,
    /// `9007199254740991`.
    MaxSafe,
    /// `9007199254740992`.
    Unsafe,
    /// `"5"`.
    Str,
    /// `null`.
    Null,
}

/// A method name.
#[derive(Arbitrary, Debug, Clone)]
pub enum MethodGen {
    /// One of the protocol's methods, or a near miss.
    Known(KnownMethod),
    /// Any short string.
    Any(Small),
}

/// Method names worth hitting on purpose.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum KnownMethod {
    /// `initialize`
    Initialize,
    /// `session/prompt`
    Prompt,
    /// `session/resume`
    Resume,
    /// `session/wait`
    Wait,
    /// `session/working-directory/get`
    WdGet,
    /// `session/working-directory/set`
    WdSet,
    /// `shutdown`
    Shutdown,
    /// `session/cancel` (never existed)
    Cancel,
    /// `Initialize` (case matters)
    CaseMiss,
    /// `""`
    Empty,
    /// `session/prompt ` (trailing space)
    Trailing,
}

/// A JSON value (depth-limited when rendered).
#[derive(Arbitrary, Debug, Clone)]
pub enum ValGen {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i32),
    /// A double (non-finite ones render as `null`).
    Float(f64),
    /// A short string.
    Str(Small),
    /// An array.
    Arr(Vec<ValGen>),
    /// An object.
    Obj(Vec<(KeyGen, ValGen)>),
}

/// An object key: protocol member names collide on purpose.
#[derive(Arbitrary, Debug, Clone)]
pub enum KeyGen {
    /// `sessionId`.
    SessionId,
    /// `contentBlocks`.
    ContentBlocks,
    /// `cwd`.
    Cwd,
    /// `path`.
    Path,
    /// `type`.
    Type,
    /// `text`.
    Text,
    /// `maxTokens`.
    MaxTokens,
    /// Any short string.
    Any(Small),
}

/// Raw bytes for a line.
#[derive(Arbitrary, Debug, Clone)]
pub enum RawGen {
    /// Text followed by `\n`.
    Line(Small),
    /// Bytes as they are (may hold invalid UTF-8, CRs, or no newline at all).
    Bytes(Vec<u8>),
    /// A blank line.
    Blank,
    /// A request line with a CRLF ending and a BOM in front.
    BomCrlf,
    /// A batch holding one request.
    Batch,
}
