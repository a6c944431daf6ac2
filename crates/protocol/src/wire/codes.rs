//! JSON-RPC error codes, with the ones this protocol uses named (docs/CONTRACT.md#s2.3, #s9).

use std::fmt;

/// A JSON-RPC error code. Lossless: any integer is representable; the standard ones are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Never produced by the upstream runtime (malformed lines are ignored instead).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// Never produced by the upstream runtime.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// Only from a transport with no request handler installed (`method not found: <m>`).
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Never produced by the upstream runtime (bad params surface as -32603).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Every handler failure, unknown methods included, with the thrown message verbatim.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);

    /// The standard name of a reserved code, if it has one.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "parse error",
            -32600 => "invalid request",
            -32601 => "method not found",
            -32602 => "invalid params",
            -32603 => "internal error",
            -32099..=-32000 => "server error",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{} ({n})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl From<i64> for ErrorCode {
    fn from(v: i64) -> Self {
        ErrorCode(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_codes_display_with_their_names() {
        assert_eq!(
            ErrorCode::METHOD_NOT_FOUND.to_string(),
            "-32601 (method not found)"
        );
        assert_eq!(
            ErrorCode::INTERNAL_ERROR.to_string(),
            "-32603 (internal error)"
        );
        assert_eq!(ErrorCode(-32000).to_string(), "-32000 (server error)");
        assert_eq!(ErrorCode(7).to_string(), "7");
    }
}
