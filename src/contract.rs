//! The protocol contract the kit enforces, `docs/CONTRACT.md`, built into the library so that an
//! installed binary can quote it (`dsh-conformance explain`), and read as numbered sections.
//!
//! A section starts with an anchor line `<a id="s2.3"></a>` followed by its heading
//! `### §2.3 Title`, and runs to the next heading of the same or a higher level, so a section holds
//! its subsections. A citation `§2.3` (in a check's row, a trace's `# contract:` line, a comment's
//! `docs/CONTRACT.md#s2.3`) names the section whose anchor id is `s2.3`.

use std::fmt;
use std::sync::OnceLock;

/// The text of `docs/CONTRACT.md` as it was when the library was built.
pub const DOCUMENT: &str = include_str!("../docs/CONTRACT.md");

/// Where the document lives in the repository, for links.
pub const PATH: &str = "docs/CONTRACT.md";

/// One numbered section of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    /// Its number as cited without the `§`: `2.3`.
    pub number: &'a str,
    /// The heading after the number: `Answering requests`.
    pub title: &'a str,
    /// The heading's level: 2 for `##`, 3 for `###`.
    pub level: usize,
    /// Everything below the heading up to the next heading of the same or a higher level
    /// (subsections included), trimmed.
    pub body: &'a str,
    /// 1-based line of the heading in the document.
    pub line: usize,
}

impl Section<'_> {
    /// The HTML anchor id: `s` followed by the number.
    pub fn anchor(&self) -> String {
        format!("s{}", self.number)
    }

    /// The section's address in the repository: `docs/CONTRACT.md#s2.3`.
    pub fn link(&self) -> String {
        format!("{PATH}#s{}", self.number)
    }

    /// The body as it reads, without the requirement anchors (`<a id="r2.1-…"></a>`) its lines
    /// carry for `docs/REQUIREMENTS.md`.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.body.len());
        let mut rest = self.body;
        while let Some(at) = rest.find("<a id=\"r") {
            let Some(end) = rest[at..].find("</a>") else {
                break;
            };
            out.push_str(&rest[..at]);
            rest = &rest[at + end + "</a>".len()..];
        }
        out.push_str(rest);
        out
    }
}

/// A defect in the document's section structure (1-based lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocError {
    /// An anchor line whose next non-blank line is not a heading.
    AnchorWithoutHeading {
        /// The anchor's line.
        line: usize,
        /// Its id.
        anchor: String,
    },
    /// An anchor id that is not `s` followed by a section number.
    MalformedAnchor {
        /// The anchor's line.
        line: usize,
        /// Its id.
        anchor: String,
    },
    /// A heading whose `§` number is not its anchor's.
    NumberMismatch {
        /// The heading's line.
        line: usize,
        /// The anchor's id.
        anchor: String,
        /// The heading's text.
        heading: String,
    },
    /// A numbered heading (`## §N …`) with no anchor line before it.
    HeadingWithoutAnchor {
        /// The heading's line.
        line: usize,
        /// The heading's text.
        heading: String,
    },
    /// A second section with a number already used.
    Duplicate {
        /// The second heading's line.
        line: usize,
        /// The number.
        number: String,
    },
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocError::AnchorWithoutHeading { line, anchor } => {
                write!(f, "line {line}: anchor {anchor:?} is not followed by a heading")
            }
            DocError::MalformedAnchor { line, anchor } => write!(
                f,
                "line {line}: anchor {anchor:?} is not `s` followed by a section number"
            ),
            DocError::NumberMismatch {
                line,
                anchor,
                heading,
            } => write!(
                f,
                "line {line}: heading {heading:?} does not carry the number of its anchor {anchor:?}"
            ),
            DocError::HeadingWithoutAnchor { line, heading } => {
                write!(f, "line {line}: numbered heading {heading:?} has no anchor line")
            }
            DocError::Duplicate { line, number } => {
                write!(f, "line {line}: section §{number} appears twice")
            }
        }
    }
}

impl std::error::Error for DocError {}

/// Why a citation does not name sections of the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CitationError {
    /// The citation names nothing.
    Empty,
    /// A word that is not `§` followed by a section number.
    Malformed(String),
    /// A well-formed number the contract has no section for.
    Unknown(String),
}

impl fmt::Display for CitationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CitationError::Empty => f.write_str("the citation names no section"),
            CitationError::Malformed(w) => {
                write!(f, "{w:?} is not a section citation like §2.3")
            }
            CitationError::Unknown(n) => write!(f, "{PATH} has no section §{n}"),
        }
    }
}

impl std::error::Error for CitationError {}

/// The contract's sections, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contract<'a> {
    sections: Vec<Section<'a>>,
}

impl<'a> Contract<'a> {
    /// Reads the sections of a document written in the anchor scheme of this module.
    pub fn parse(doc: &'a str) -> Result<Contract<'a>, DocError> {
        let headings = headings(doc)?;
        let mut sections: Vec<Section<'a>> = Vec::new();
        for (i, h) in headings.iter().enumerate() {
            let Some(number) = h.number else { continue };
            if sections.iter().any(|s| s.number == number) {
                return Err(DocError::Duplicate {
                    line: h.line,
                    number: number.to_owned(),
                });
            }
            let end = headings[i + 1..]
                .iter()
                .find(|n| n.level <= h.level)
                .map_or(doc.len(), |n| n.block_start);
            sections.push(Section {
                number,
                title: h.title,
                level: h.level,
                body: doc[h.body_start..end].trim(),
                line: h.line,
            });
        }
        Ok(Contract { sections })
    }

    /// Every section, in document order.
    pub fn sections(&self) -> &[Section<'a>] {
        &self.sections
    }

    /// The section numbered `number` (`2.3`, without the `§`).
    pub fn section(&self, number: &str) -> Option<&Section<'a>> {
        self.sections.iter().find(|s| s.number == number)
    }

    /// The sections a citation such as `§2.4 §7` names, in its order.
    pub fn resolve(&self, citation: &str) -> Result<Vec<&Section<'a>>, CitationError> {
        let mut out = Vec::new();
        for word in citation.split_whitespace() {
            let number = word
                .strip_prefix('§')
                .filter(|n| is_number(n))
                .ok_or_else(|| CitationError::Malformed(word.to_owned()))?;
            out.push(
                self.section(number)
                    .ok_or_else(|| CitationError::Unknown(number.to_owned()))?,
            );
        }
        if out.is_empty() {
            return Err(CitationError::Empty);
        }
        Ok(out)
    }
}

impl Contract<'static> {
    /// The contract built into the library ([`DOCUMENT`]).
    pub fn builtin() -> &'static Contract<'static> {
        static BUILTIN: OnceLock<Contract<'static>> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            // A unit test parses the same text, so a build whose document is malformed fails its tests.
            Contract::parse(DOCUMENT).unwrap_or_else(|e| panic!("{PATH}: {e}"))
        })
    }
}

/// Every section number cited with a `§` in free text, in order: `§3.2–§3.5 §9.` gives `3.2`,
/// `3.5`, `9`. A range's inner sections are not listed.
pub fn cited_numbers(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices('§') {
        let rest = &text[i + '§'.len_utf8()..];
        let len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = rest[..len].trim_end_matches('.');
        if is_number(number) {
            out.push(number);
        }
    }
    out
}

/// Whether `s` is a section number: digits, optionally followed by `.digits` groups.
fn is_number(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()))
}

/// A heading of the document, outside code blocks.
struct Heading<'a> {
    level: usize,
    /// The number of an anchored heading.
    number: Option<&'a str>,
    title: &'a str,
    line: usize,
    /// Where the heading's block begins: its anchor line, else the heading itself.
    block_start: usize,
    /// Just after the heading line.
    body_start: usize,
}

fn headings(doc: &str) -> Result<Vec<Heading<'_>>, DocError> {
    let mut out = Vec::new();
    // An anchor waiting for its heading: (line, offset, id).
    let mut anchor: Option<(usize, usize, &str)> = None;
    let mut in_fence = false;
    let mut offset = 0;
    for (i, raw) in doc.split_inclusive('\n').enumerate() {
        let line_no = i + 1;
        let start = offset;
        offset += raw.len();
        let line = raw.trim();
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence || line.starts_with("```") {
            if let Some((line, _, id)) = anchor {
                return Err(DocError::AnchorWithoutHeading {
                    line,
                    anchor: id.to_owned(),
                });
            }
            continue;
        }
        if let Some(id) = line
            .strip_prefix("<a id=\"")
            .and_then(|l| l.strip_suffix("\"></a>"))
        {
            if let Some((line, _, id)) = anchor {
                return Err(DocError::AnchorWithoutHeading {
                    line,
                    anchor: id.to_owned(),
                });
            }
            if !id.strip_prefix('s').is_some_and(is_number) {
                return Err(DocError::MalformedAnchor {
                    line: line_no,
                    anchor: id.to_owned(),
                });
            }
            anchor = Some((line_no, start, id));
            continue;
        }
        let level = line.bytes().take_while(|&b| b == b'#').count();
        let text = line[level..].strip_prefix(' ').map(str::trim);
        let Some(text) = text.filter(|_| (1..=6).contains(&level)) else {
            if let (Some((line, _, id)), false) = (anchor, line.is_empty()) {
                return Err(DocError::AnchorWithoutHeading {
                    line,
                    anchor: id.to_owned(),
                });
            }
            continue;
        };
        let numbered = text.strip_prefix('§').map(|t| {
            let len = t.find(char::is_whitespace).unwrap_or(t.len());
            (&t[..len], t[len..].trim())
        });
        let (number, title, block_start) = match (anchor.take(), numbered) {
            (Some((_, at, id)), Some((number, title))) if id[1..] == *number => {
                (Some(number), title, at)
            }
            (Some((_, _, id)), _) => {
                return Err(DocError::NumberMismatch {
                    line: line_no,
                    anchor: id.to_owned(),
                    heading: text.to_owned(),
                })
            }
            (None, Some(_)) => {
                return Err(DocError::HeadingWithoutAnchor {
                    line: line_no,
                    heading: text.to_owned(),
                })
            }
            (None, None) => (None, text, start),
        };
        out.push(Heading {
            level,
            number,
            title,
            line: line_no,
            block_start,
            body_start: offset,
        });
    }
    if let Some((line, _, id)) = anchor {
        return Err(DocError::AnchorWithoutHeading {
            line,
            anchor: id.to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Title\n\nIntro.\n\n<a id=\"s1\"></a>\n## §1 One\n\nText of one.\n\n\
<a id=\"s1.1\"></a>\n### §1.1 One dot one\n\nInner.\n```\n## §9 not a heading\n```\n\n\
<a id=\"s2\"></a>\n## §2 Two\nLast.\n";

    #[test]
    fn a_section_reads_without_its_requirement_anchors() {
        let doc =
            "<a id=\"s1\"></a>\n## §1 One\n\n- <a id=\"r1-a\"></a><a id=\"r1-b\"></a>**Only** x\n";
        let c = Contract::parse(doc).unwrap();
        assert_eq!(c.section("1").unwrap().text(), "- **Only** x");
    }

    #[test]
    fn sections_run_to_the_next_heading_of_their_level_and_hold_their_subsections() {
        let c = Contract::parse(DOC).unwrap();
        let numbers: Vec<_> = c.sections().iter().map(|s| s.number).collect();
        assert_eq!(numbers, ["1", "1.1", "2"]);
        let one = c.section("1").unwrap();
        assert_eq!((one.title, one.level, one.line), ("One", 2, 6));
        assert!(one.body.starts_with("Text of one."), "{:?}", one.body);
        assert!(one.body.contains("Inner.") && one.body.contains("## §9 not a heading"));
        assert!(one
            .body
            .contains("<a id=\"s1.1\"></a>\n### §1.1 One dot one"));
        assert!(
            one.body.ends_with("```"),
            "it stops at §2's anchor: {:?}",
            one.body
        );
        let inner = c.section("1.1").unwrap();
        assert!(inner.body.starts_with("Inner.") && inner.body.ends_with("```"));
        assert_eq!(c.section("2").unwrap().body, "Last.");
        assert_eq!(inner.link(), format!("{PATH}#s1.1"));
        assert_eq!(inner.anchor(), "s1.1");
    }

    #[test]
    fn citations_resolve_in_order_and_name_what_is_wrong() {
        let c = Contract::parse(DOC).unwrap();
        let got: Vec<_> = c
            .resolve("§2 §1.1")
            .unwrap()
            .iter()
            .map(|s| s.number)
            .collect();
        assert_eq!(got, ["2", "1.1"]);
        assert_eq!(c.resolve("§3"), Err(CitationError::Unknown("3".into())));
        assert_eq!(c.resolve("2"), Err(CitationError::Malformed("2".into())));
        assert_eq!(
            c.resolve("§1..2"),
            Err(CitationError::Malformed("§1..2".into()))
        );
        assert_eq!(c.resolve("  "), Err(CitationError::Empty));
    }

    #[test]
    fn a_broken_anchor_structure_is_an_error_naming_the_line() {
        let mismatch = "<a id=\"s1\"></a>\n## §2 Two\n";
        assert!(matches!(
            Contract::parse(mismatch),
            Err(DocError::NumberMismatch { line: 2, .. })
        ));
        let orphan = "<a id=\"s1\"></a>\ntext\n## §1 One\n";
        assert!(matches!(
            Contract::parse(orphan),
            Err(DocError::AnchorWithoutHeading { line: 1, .. })
        ));
        let bare = "## §1 One\n";
        assert!(matches!(
            Contract::parse(bare),
            Err(DocError::HeadingWithoutAnchor { line: 1, .. })
        ));
        let bad = "<a id=\"x1\"></a>\n## §1 One\n";
        assert!(matches!(
            Contract::parse(bad),
            Err(DocError::MalformedAnchor { line: 1, .. })
        ));
        let twice = "<a id=\"s1\"></a>\n## §1 A\n<a id=\"s1\"></a>\n## §1 B\n";
        assert!(matches!(
            Contract::parse(twice),
            Err(DocError::Duplicate { line: 4, .. })
        ));
    }

    #[test]
    fn numbers_are_found_in_free_text() {
        assert_eq!(
            cited_numbers("§3.2–§3.5 §9. and §2.4; ECMA-like §x"),
            ["3.2", "3.5", "9", "2.4"]
        );
    }

    #[test]
    fn the_built_in_contract_parses_and_every_section_has_text() {
        let c = Contract::parse(DOCUMENT).unwrap();
        assert!(c.sections().len() >= 30);
        for s in c.sections() {
            assert!(!s.body.is_empty(), "§{} is empty", s.number);
            assert!(!s.title.is_empty(), "§{} has no title", s.number);
        }
        assert_eq!(Contract::builtin(), &c);
    }
}
