//! Typed evidence: where a frame differs from what the contract (or a trace) wanted. Judges fill
//! it in; the human, JSON, JUnit and HTML reports render it, and nothing parses it back out of a
//! message.

use std::fmt;

/// The smallest part of a frame that differs from what was wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// JSON pointer of the differing part in the frame (`/` for the whole frame).
    pub pointer: String,
    /// A word on how it differs, where the values alone do not say it (`strings part at byte 12
    /// (lengths 80 and 81)`).
    pub note: Option<String>,
    /// What was wanted, rendered.
    pub expected: String,
    /// What the frame had, rendered (`(absent)`, `the error {…}` for an answer of the other kind).
    pub got: String,
    /// The frame's value that differs, as compact JSON text, when it has one: what a report
    /// marks in the frame.
    pub value: Option<String>,
    /// The member that value is under, when it is a member's (for an answer of the other kind,
    /// `error` where `result` was wanted).
    pub member: Option<String>,
}

impl Difference {
    /// A difference at `pointer`: `expected`, `got`; the value found is `got` itself when it is
    /// JSON text, under the pointer's last member.
    pub fn at(
        pointer: impl Into<String>,
        expected: impl Into<String>,
        got: impl Into<String>,
    ) -> Difference {
        let pointer = pointer.into();
        let got = got.into();
        let member = member_of(&pointer);
        Difference {
            value: (got != "(absent)").then(|| got.clone()),
            member,
            pointer,
            note: None,
            expected: expected.into(),
            got,
        }
    }

    /// Whether the difference is in the frame's id or method: the frame is another response or
    /// notification altogether, so it says nothing about the wanted frame's shape.
    pub fn is_other_frame(&self) -> bool {
        self.pointer == "/id" || self.pointer == "/method"
    }
}

/// The last reference token of a JSON pointer, unescaped, unless it is an array index.
fn member_of(pointer: &str) -> Option<String> {
    let last = pointer.rsplit('/').next().filter(|s| !s.is_empty())?;
    if last.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(last.replace("~1", "/").replace("~0", "~"))
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.pointer)?;
        if let Some(n) = &self.note {
            write!(f, "{n}: ")?;
        }
        write!(f, "expected {}, got {}", self.expected, self.got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_renders_as_pointer_expected_got_and_names_its_member() {
        let d = Difference::at("/result/a~1b", "2", "1");
        assert_eq!(d.to_string(), "/result/a~1b: expected 2, got 1");
        assert_eq!(
            (d.member.as_deref(), d.value.as_deref()),
            (Some("a/b"), Some("1"))
        );
        let d = Difference::at("/params/items/3", "\"x\"", "(absent)");
        assert_eq!((d.member, d.value), (None, None));
        assert!(Difference::at("/id", "1", "2").is_other_frame());
        assert!(!Difference::at("/idx", "1", "2").is_other_frame());
    }
}
