//! The YAML the release's patch files are written in, as far as the reference runtime reads it
//! (docs/CONTRACT.md#s13.6): block sequences and mappings by indentation, one-line or multi-line
//! flow collections (`[…]`, `{…}`), plain, single- and double-quoted scalars, `|`/`>` block
//! scalars, comments, and the `!!js` tag (kept as its source text, never evaluated).
//!
//! Errors read like js-yaml's (`YAMLException: <reason> (<line>:<column>)`), the form the release
//! quotes after `failed to parse overlay <file>: `; the reasons are js-yaml's for the cases the
//! reference detects (an unclosed flow collection, bad indentation), a plain description otherwise.

use std::fmt;

mod flow;
use flow::{Flow, FlowError};

/// A parsed YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    /// `null`, `~`, or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Num(f64),
    /// A string.
    Str(String),
    /// A `!!js` expression, as written (the release evaluates it; the reference does not).
    Js(String),
    /// A sequence.
    Seq(Vec<Yaml>),
    /// A mapping, in document order.
    Map(Vec<(String, Yaml)>),
}

impl Yaml {
    /// The value of `key` when this is a mapping holding it.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A parse failure, with js-yaml's 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// What is wrong.
    pub reason: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "YAMLException: {} ({}:{})",
            self.reason, self.line, self.column
        )
    }
}

struct Line<'a> {
    /// 0-based line number in the document.
    no: usize,
    indent: usize,
    text: &'a str,
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    i: usize,
    /// Position of the end of the stream (for errors there).
    end: (usize, usize),
}

/// Parses one YAML document.
pub fn parse(doc: &str) -> Result<Yaml, YamlError> {
    let doc = doc.strip_prefix('\u{feff}').unwrap_or(doc);
    let mut lines = Vec::new();
    for (no, raw) in doc.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let text = strip_comment(raw);
        let trimmed = text.trim_end();
        let body = trimmed.trim_start_matches(' ');
        if body.is_empty() || (no == 0 || lines.is_empty()) && body == "---" {
            continue;
        }
        if body.starts_with('\t') {
            return Err(err("tab characters must not be used in indentation", no, 0));
        }
        lines.push(Line {
            no,
            indent: trimmed.len() - body.len(),
            text: body,
        });
    }
    let last = doc.split('\n').count() - 1;
    let end_col = doc.rsplit('\n').next().map_or(0, |l| l.chars().count());
    let mut p = Parser {
        lines,
        i: 0,
        end: (last, end_col),
    };
    if p.lines.is_empty() {
        return Ok(Yaml::Null);
    }
    let indent = p.lines[0].indent;
    let v = p.block(indent)?;
    if let Some(l) = p.lines.get(p.i) {
        return Err(err(
            "end of the stream or a document separator is expected",
            l.no,
            l.indent,
        ));
    }
    Ok(v)
}

fn err(reason: &str, line: usize, col: usize) -> YamlError {
    YamlError {
        reason: reason.into(),
        line: line + 1,
        column: col + 1,
    }
}

/// The line without a trailing `# comment` (a `#` at the start or after whitespace, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut prev_space) = (false, false, true);
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c == ' ' || c == '\t';
    }
    line
}

/// Where `key: ` ends in a mapping line (index of the `:`), outside quotes and flow brackets.
fn mapping_colon(text: &str) -> Option<usize> {
    if text.starts_with(['[', '{', '!']) {
        return None;
    }
    let (mut single, mut double) = (false, false);
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b':' if !single && !double && (i + 1 == b.len() || b[i + 1] == b' ') => return Some(i),
            _ => {}
        }
    }
    None
}

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

impl<'a> Parser<'a> {
    /// The node whose first line is the current one, at exactly `indent`.
    fn block(&mut self, indent: usize) -> Result<Yaml, YamlError> {
        let l = &self.lines[self.i];
        if is_item(l.text) {
            self.seq(indent)
        } else if mapping_colon(l.text).is_some() {
            self.map(indent)
        } else {
            let (no, col, text) = (l.no, l.indent, l.text);
            self.i += 1;
            self.inline(text, no, col)
        }
    }

    /// The nested node after `key:` or `-` with nothing else on the line (`Null` when none).
    fn nested(&mut self, parent: usize, seq_ok: bool) -> Result<Yaml, YamlError> {
        match self.lines.get(self.i) {
            Some(l) if l.indent > parent || (seq_ok && l.indent == parent && is_item(l.text)) => {
                let ind = l.indent;
                self.block(ind)
            }
            _ => Ok(Yaml::Null),
        }
    }

    fn seq(&mut self, indent: usize) -> Result<Yaml, YamlError> {
        let mut items = Vec::new();
        while let Some(l) = self.lines.get(self.i) {
            if l.indent < indent {
                break;
            }
            if l.indent > indent || !is_item(l.text) {
                return Err(err("bad indentation of a sequence entry", l.no, l.indent));
            }
            let rest = l.text[1..].trim_start_matches(' ');
            if rest.is_empty() {
                self.i += 1;
                items.push(self.nested(indent, false)?);
                continue;
            }
            // The rest of the line is a node at its own column (e.g. `- id: x` then `  name: y`).
            let col = l.indent + (l.text.len() - rest.len());
            let no = l.no;
            self.lines[self.i] = Line {
                no,
                indent: col,
                text: rest,
            };
            items.push(self.block(col)?);
        }
        Ok(Yaml::Seq(items))
    }

    fn map(&mut self, indent: usize) -> Result<Yaml, YamlError> {
        let mut entries: Vec<(String, Yaml)> = Vec::new();
        while let Some(l) = self.lines.get(self.i) {
            if l.indent < indent || (l.indent == indent && is_item(l.text)) {
                break;
            }
            let (no, col, text) = (l.no, l.indent, l.text);
            let Some(colon) = mapping_colon(text).filter(|_| l.indent == indent) else {
                return Err(err("bad indentation of a mapping entry", no, col));
            };
            let key = match self.inline(text[..colon].trim_end(), no, col)? {
                Yaml::Str(s) | Yaml::Js(s) => s,
                Yaml::Null => "null".into(),
                Yaml::Bool(b) => b.to_string(),
                Yaml::Num(n) => crate::wire::json::number_value(n).to_string(),
                _ => return Err(err("unsupported mapping key", no, col)),
            };
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(err("duplicated mapping key", no, col));
            }
            let rest = text[colon + 1..].trim_start_matches(' ');
            self.i += 1;
            let value = if rest.is_empty() {
                self.nested(indent, true)?
            } else if let Some(style) = block_scalar_style(rest) {
                self.block_scalar(indent, style)
            } else {
                let vcol = col + (text.len() - rest.len());
                self.inline(rest, no, vcol)?
            };
            entries.push((key, value));
        }
        Ok(Yaml::Map(entries))
    }

    /// `|`, `|-`, `>`, `>-` scalars: the more-indented lines that follow.
    fn block_scalar(&mut self, parent: usize, (folded, keep_last): (bool, bool)) -> Yaml {
        let mut parts: Vec<String> = Vec::new();
        let mut base = None;
        while let Some(l) = self.lines.get(self.i) {
            if l.indent <= parent {
                break;
            }
            let b = *base.get_or_insert(l.indent);
            parts.push(format!(
                "{}{}",
                " ".repeat(l.indent.saturating_sub(b)),
                l.text
            ));
            self.i += 1;
        }
        let mut s = parts.join(if folded { " " } else { "\n" });
        if keep_last && !s.is_empty() {
            s.push('\n');
        }
        Yaml::Str(s)
    }

    /// A value written on one line (flow collections may continue on the next lines).
    fn inline(&mut self, text: &str, no: usize, col: usize) -> Result<Yaml, YamlError> {
        if let Some(expr) = text.strip_prefix("!!js") {
            return Ok(Yaml::Js(expr.trim().to_owned()));
        }
        if text.starts_with(['[', '{']) {
            let mut src = String::from(text);
            let mut flow = Flow::new(&src);
            loop {
                match flow.value() {
                    Ok(v) => {
                        flow.skip_ws();
                        if flow.pos < flow.s.len() {
                            return Err(err(
                                "unexpected characters after a flow collection",
                                no,
                                col + flow.pos,
                            ));
                        }
                        return Ok(v);
                    }
                    Err(FlowError::Eof) => match self.lines.get(self.i) {
                        Some(next) => {
                            src.push(' ');
                            src.push_str(next.text);
                            self.i += 1;
                            flow = Flow::new(&src);
                        }
                        None => {
                            return Err(err(
                                "unexpected end of the stream within a flow collection",
                                self.end.0,
                                self.end.1,
                            ))
                        }
                    },
                    Err(FlowError::At(reason, at)) => return Err(err(reason, no, col + at)),
                }
            }
        }
        let mut flow = Flow::new(text);
        flow.plain_stops = false;
        match flow.value() {
            Ok(v) => Ok(v),
            Err(FlowError::At(reason, at)) => Err(err(reason, no, col + at)),
            Err(FlowError::Eof) => Err(err(
                "unexpected end of the stream within a quoted scalar",
                no,
                col,
            )),
        }
    }
}

fn block_scalar_style(rest: &str) -> Option<(bool, bool)> {
    match rest {
        "|" => Some((false, true)),
        "|-" => Some((false, false)),
        ">" => Some((true, true)),
        ">-" => Some((true, false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Yaml {
        Yaml::Str(v.into())
    }

    #[test]
    fn patch_lists_parse() {
        let doc = "# comment\n- id: tool-fs\n  disabled: true\n- insert:\n    - id: x\n      name: '@acme/one'\n      config: {a: 1, b: [x, \"y\"]}\n";
        let v = parse(doc).unwrap();
        let Yaml::Seq(items) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(items[0].get("id"), Some(&s("tool-fs")));
        assert_eq!(items[0].get("disabled"), Some(&Yaml::Bool(true)));
        let Some(Yaml::Seq(rows)) = items[1].get("insert") else {
            panic!()
        };
        assert_eq!(rows[0].get("name"), Some(&s("@acme/one")));
        assert_eq!(
            rows[0].get("config").and_then(|c| c.get("b")),
            Some(&Yaml::Seq(vec![s("x"), s("y")]))
        );
    }

    #[test]
    fn scalars_tags_and_empty_documents() {
        assert_eq!(parse("").unwrap(), Yaml::Null);
        assert_eq!(parse("# only\n").unwrap(), Yaml::Null);
        assert_eq!(parse("[]\n").unwrap(), Yaml::Seq(vec![]));
        assert_eq!(
            parse("foo: bar\n").unwrap(),
            Yaml::Map(vec![("foo".into(), s("bar"))])
        );
        assert_eq!(parse("- 3\n").unwrap(), Yaml::Seq(vec![Yaml::Num(3.0)]));
        assert_eq!(
            parse("- disabled: !!js process.platform === 'win32'\n").unwrap(),
            Yaml::Seq(vec![Yaml::Map(vec![(
                "disabled".into(),
                Yaml::Js("process.platform === 'win32'".into())
            )])])
        );
        assert_eq!(
            parse("k: |-\n  a\n  b\n").unwrap(),
            Yaml::Map(vec![("k".into(), s("a\nb"))])
        );
    }

    #[test]
    fn an_unclosed_flow_collection_fails_at_the_end_of_the_stream_like_js_yaml() {
        // The release: `YAMLException: unexpected end of the stream within a flow collection (2:1)`.
        let e = parse("- [unclosed\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "YAMLException: unexpected end of the stream within a flow collection (2:1)"
        );
        assert!(parse("a: 1\n  b: 2\n").is_err());
    }
}
