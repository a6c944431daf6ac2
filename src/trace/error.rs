//! A trace parse error: file:line:column and what was expected. Its own module so that the
//! parser ([`super::syntax`]) and the pre-parse `{{repeat:…}}` expansion ([`super::repeat`]) both
//! use it without depending on each other.

use std::fmt;

/// A parse error: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// File name (or the name given to [`Trace::parse`](super::Trace::parse)).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub col: usize,
    /// What was wrong or expected.
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.msg)
    }
}

impl std::error::Error for ParseError {}
