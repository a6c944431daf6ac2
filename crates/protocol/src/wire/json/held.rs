//! Held text: JavaScript strings (any sequence of UTF-16 code units, lone surrogates included)
//! carried in Rust `String`s, injectively, so that `JSON.stringify(JSON.parse(s))` can be
//! reproduced exactly (docs/CONTRACT.md#s2.4).
//!
//! A Rust `String` cannot hold a lone surrogate, and `JSON.parse("\"\\ud800\"")` is one. The
//! wire layer therefore keeps every string it parses as *held text*, which differs from the
//! JavaScript string only inside a reserved block of 2049 code points at the very end of
//! Unicode, in plane 16's private use area (U+10F7FF..=U+10FFFF, which no text in the wild
//! uses):
//!
//! - the lone surrogate `0xD800 + k` (k < 2048) is the single character U+10F800 + k, so it
//!   still counts as one character, as it is one code unit to JavaScript;
//! - a *genuine* character of the reserved block is preceded by the tag [`TAG`] (U+10F7FF), so
//!   U+10F800 itself is held as U+10F7FF U+10F800 and the tag itself as two tags;
//! - everything else is itself.
//!
//! So two JavaScript strings are equal exactly when their held texts are (keys that differ only
//! in lone surrogates stay distinct members), and held text without a reserved character, which
//! is all text but a few contrived strings, is the plain UTF-8 of the JavaScript string.
//!
//! Only this module knows the encoding. The parser builds held text ([`push_lone`],
//! [`push_char`]; [`may_be_reserved`] tells its fast paths when to look), the writer reads it
//! back as [`pieces`] (a lone surrogate is written `\udXXX`, lowercase, as ES2019's
//! well-formed `JSON.stringify` writes it). Text that comes from elsewhere (a file, a process's
//! output) becomes held text through [`hold`]; held text that leaves for somewhere that takes
//! UTF-8 (a file name, a command to run) goes through [`to_utf8_lossy`], which does what
//! Node.js does when it encodes a string as UTF-8 (a lone surrogate becomes U+FFFD).
//!
//! A tag that is not followed by a reserved character (never made by this module; only by
//! cutting held text at a character boundary in between) reads as a genuine tag.

use std::borrow::Cow;

/// The tag that marks the next character as genuine: U+10F7FF, the first of the reserved block.
pub const TAG: char = '\u{10F7FF}';

/// The first code point of the reserved block ([`TAG`]).
const RESERVED: u32 = 0x10F7FF;

/// The character a lone surrogate `0xD800 + k` is held as: U+10F800 + k.
const LONE_BASE: u32 = 0x10F800;

/// Whether `c` is in the reserved block (the tag or a lone surrogate's stand-in).
#[inline]
pub fn is_reserved(c: char) -> bool {
    c as u32 >= RESERVED
}

/// Whether a UTF-8 lead byte may begin a reserved character: every reserved character is
/// encoded `F4 8F 9F..=BF xx`, so scanners need only stop at `0xF4` (plane 16, rare) to look.
#[inline]
pub fn may_be_reserved(lead: u8) -> bool {
    lead == 0xF4
}

/// The held character of the lone surrogate code unit `unit` (`0xD800..=0xDFFF`).
///
/// # Panics
/// When `unit` is not a surrogate code unit.
#[inline]
pub fn lone(unit: u16) -> char {
    assert!(
        (0xD800..0xE000).contains(&unit),
        "{unit:#x} is not a surrogate"
    );
    char::from_u32(LONE_BASE + (unit as u32 - 0xD800)).expect("plane 16 code point")
}

/// Appends the lone surrogate code unit `unit` to held text.
#[inline]
pub fn push_lone(out: &mut String, unit: u16) {
    out.push(lone(unit));
}

/// Appends a genuine character to held text (tagged when it is in the reserved block).
#[inline]
pub fn push_char(out: &mut String, c: char) {
    if is_reserved(c) {
        out.push(TAG);
    }
    out.push(c);
}

/// Appends genuine text (from outside the wire: a file, a process, a literal) to held text.
pub fn push_str(out: &mut String, s: &str) {
    if !s.bytes().any(may_be_reserved) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        push_char(out, c);
    }
}

/// The held text of genuine text: `s` itself unless it has a reserved character (then tagged).
pub fn hold(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_reserved) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_str(&mut out, s);
    Cow::Owned(out)
}

/// The held text of a JavaScript string given as UTF-16 code units.
pub fn from_utf16(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok(c) => push_char(&mut out, c),
            Err(e) => push_lone(&mut out, e.unpaired_surrogate()),
        }
    }
    out
}

/// The JavaScript string (UTF-16 code units) that held text stands for.
pub fn to_utf16(s: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(s.len());
    for p in pieces(s) {
        match p {
            Piece::Text(t) => out.extend(t.encode_utf16()),
            Piece::Lone(u) => out.push(u),
            Piece::Pair(c) => out.extend(c.encode_utf16(&mut [0; 2]).iter()),
        }
    }
    out
}

/// Held text as Node.js encodes the string to UTF-8 (`Buffer.from(s)`, file names, a child's
/// arguments): a lone surrogate becomes U+FFFD, tagged characters are themselves.
pub fn to_utf8_lossy(s: &str) -> Cow<'_, str> {
    if !s.bytes().any(may_be_reserved) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for p in pieces(s) {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Lone(_) => out.push(char::REPLACEMENT_CHARACTER),
            Piece::Pair(c) => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether held text holds a lone surrogate.
pub fn has_lone(s: &str) -> bool {
    pieces(s).any(|p| matches!(p, Piece::Lone(_)))
}

/// The length of the JavaScript string held text stands for (`s.length`: UTF-16 code units).
pub fn utf16_len(s: &str) -> usize {
    pieces(s)
        .map(|p| match p {
            Piece::Text(t) => t.encode_utf16().count(),
            Piece::Lone(_) => 1,
            Piece::Pair(_) => 2,
        })
        .sum()
}

/// The code points of the string held text stands for, a lone surrogate counting as one (what
/// Python's `len` gives for the same string; a tagged character is one, not two).
pub fn char_count(s: &str) -> usize {
    s.chars().count() - tags(s)
}

/// The byte offset in held text of the `n`th code point ([`char_count`]'s), or `s.len()`: a
/// cut there never separates a tag from its character.
pub fn nth_char(s: &str, n: usize) -> usize {
    let mut seen = 0;
    let mut tagged = false;
    for (i, c) in s.char_indices() {
        if !tagged {
            if seen == n {
                return i;
            }
            seen += 1;
        }
        tagged = !tagged
            && c == TAG
            && s[i + c.len_utf8()..]
                .chars()
                .next()
                .is_some_and(is_reserved);
    }
    s.len()
}

/// How many tags (each standing before a reserved character) held text has.
fn tags(s: &str) -> usize {
    if !s.bytes().any(may_be_reserved) {
        return 0;
    }
    let mut n = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == TAG && chars.peek().is_some_and(|&d| is_reserved(d)) {
            chars.next();
            n += 1;
        }
    }
    n
}

/// One piece of held text, as [`pieces`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Genuine text (never empty).
    Text(&'a str),
    /// A lone surrogate code unit.
    Lone(u16),
    /// A high and a low surrogate held side by side (as joining two held texts can leave
    /// them): in the JavaScript string they are a pair, this character.
    Pair(char),
}

/// Reads held text as runs of genuine text and lone surrogates (tags dropped); consecutive
/// genuine characters come as one run unless a tag stood between them. A high lone surrogate
/// directly followed by a low one reads as their [`Piece::Pair`], as JavaScript sees them.
pub fn pieces(s: &str) -> Pieces<'_> {
    Pieces { s, pos: 0 }
}

/// The iterator of [`pieces`].
#[derive(Debug, Clone)]
pub struct Pieces<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Pieces<'a> {
    /// The held text not read yet.
    pub fn as_str(&self) -> &'a str {
        &self.s[self.pos..]
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        let rest = &self.s[self.pos..];
        let first = rest.chars().next()?;
        if is_reserved(first) {
            let n = first.len_utf8();
            if first == TAG {
                // A tag: the next character is genuine (a lone tag is a genuine tag).
                let next = rest[n..].chars().next().filter(|&c| is_reserved(c));
                return Some(match next {
                    Some(c) => {
                        self.pos += n + c.len_utf8();
                        Piece::Text(&rest[n..n + c.len_utf8()])
                    }
                    None => {
                        self.pos += n;
                        Piece::Text(&rest[..n])
                    }
                });
            }
            self.pos += n;
            let unit = 0xD800 + (first as u32 - LONE_BASE);
            if unit < 0xDC00 {
                let low = rest[n..].chars().next().map_or(0, |c| c as u32);
                if (LONE_BASE + 0x400..=LONE_BASE + 0x7FF).contains(&low) {
                    self.pos += 4;
                    let c = 0x10000 + ((unit - 0xD800) << 10) + (low - LONE_BASE - 0x400);
                    return Some(Piece::Pair(char::from_u32(c).expect("a pair's code point")));
                }
            }
            return Some(Piece::Lone(unit as u16));
        }
        // A run up to the next reserved character.
        let mut end = rest.len();
        let b = rest.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if may_be_reserved(b[i]) && rest[i..].chars().next().is_some_and(is_reserved) {
                end = i;
                break;
            }
            i += 1;
        }
        self.pos += end;
        Some(Piece::Text(&rest[..end]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lone_surrogates_are_single_characters_at_the_end_of_plane_16() {
        assert_eq!(from_utf16(&[0xD800]), "\u{10F800}");
        assert_eq!(from_utf16(&[0xDFFF]), "\u{10FFFF}");
        assert_eq!(from_utf16(&[0x61, 0xDC00, 0x62]), "a\u{10FC00}b");
        // A pair is its character; a high surrogate before a non-low unit is lone.
        assert_eq!(from_utf16(&[0xD83D, 0xDE00]), "😀");
        assert_eq!(from_utf16(&[0xDBFF, 0xD800]), "\u{10FBFF}\u{10F800}");
        assert_eq!(utf16_len("a\u{10F800}😀"), 4);
    }

    #[test]
    fn genuine_reserved_characters_are_tagged_and_read_back() {
        assert_eq!(hold("x\u{10F800}"), "x\u{10F7FF}\u{10F800}");
        assert_eq!(hold("\u{10F7FF}"), "\u{10F7FF}\u{10F7FF}");
        assert!(matches!(hold("plain é 😀 \u{10F7FE}"), Cow::Borrowed(_)));
        let held = hold("a\u{10FFFF}b");
        assert_eq!(
            pieces(&held).collect::<Vec<_>>(),
            [
                Piece::Text("a"),
                Piece::Text("\u{10FFFF}"),
                Piece::Text("b")
            ]
        );
        assert!(!has_lone(&held));
        assert_eq!(to_utf8_lossy(&held), "a\u{10FFFF}b");
    }

    #[test]
    fn lossy_utf8_replaces_lone_surrogates_as_node_does() {
        let held = from_utf16(&[0x73, 0xD800, 0xD83D, 0xDE00]);
        assert!(has_lone(&held));
        assert_eq!(to_utf8_lossy(&held), "s\u{FFFD}😀");
        assert_eq!(to_utf8_lossy("s~D800"), "s~D800");
    }

    #[test]
    fn a_tag_cut_from_its_character_reads_as_a_genuine_tag() {
        assert_eq!(to_utf16("\u{10F7FF}"), [0xDBFD, 0xDFFF]);
        assert_eq!(to_utf16("\u{10F7FF}x"), [0xDBFD, 0xDFFF, 0x78]);
    }

    #[test]
    fn code_points_count_a_tagged_character_once() {
        let held = from_utf16(&[0x61, 0xD800]) + &hold("\u{10F800}\u{10F7FF}b");
        assert_eq!(char_count(&held), 5);
        let cuts: Vec<usize> = (0..=5).map(|n| nth_char(&held, n)).collect();
        assert_eq!(cuts, [0, 1, 5, 13, 21, 22]);
        assert_eq!(nth_char(&held, 9), held.len());
    }

    #[test]
    fn lone_halves_joined_read_as_their_pair() {
        let joined = from_utf16(&[0xD83D]) + &from_utf16(&[0xDE00]);
        assert_eq!(pieces(&joined).collect::<Vec<_>>(), [Piece::Pair('😀')]);
        assert_eq!(to_utf8_lossy(&joined), "😀");
        assert!(!has_lone(&joined));
        // Low then high is no pair.
        let apart = from_utf16(&[0xDE00]) + &from_utf16(&[0xD83D]);
        assert_eq!(to_utf16(&apart), [0xDE00, 0xD83D]);
        assert!(has_lone(&apart));
    }

    /// UTF-16 code units biased towards surrogates and the reserved block's pairs.
    fn units() -> impl Strategy<Value = Vec<u16>> {
        let unit = prop_oneof![
            0xD800u16..0xE000,
            Just(0xDBFD),
            Just(0xDBFE),
            Just(0xDBFF),
            0xDC00u16..0xE000,
            0x20u16..0x80,
            any::<u16>(),
        ];
        prop::collection::vec(unit, 0..16)
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn holding_is_injective_and_reads_back(a in units(), b in units()) {
            let (ha, hb) = (from_utf16(&a), from_utf16(&b));
            prop_assert_eq!(to_utf16(&ha), a.clone());
            prop_assert_eq!(ha == hb, a == b);
            prop_assert_eq!(utf16_len(&ha), a.len());
            // Held texts concatenate as the strings do.
            let joined: Vec<u16> = a.iter().chain(&b).copied().collect();
            prop_assert_eq!(to_utf16(&(ha.clone() + &hb)), joined);
        }

        #[test]
        fn genuine_text_holds_to_itself_in_utf16(s in any::<String>()) {
            let units: Vec<u16> = s.encode_utf16().collect();
            prop_assert_eq!(hold(&s).into_owned(), from_utf16(&units));
            prop_assert_eq!(to_utf8_lossy(&hold(&s)).into_owned(), s);
        }
    }
}
