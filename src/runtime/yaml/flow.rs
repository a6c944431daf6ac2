//! Flow collections (`[…]`, `{…}`) and scalars, inside one (possibly joined) line.

use super::Yaml;

pub(super) enum FlowError {
    Eof,
    At(&'static str, usize),
}

/// Flow collections and scalars inside one (joined) line.
pub(super) struct Flow<'s> {
    pub(super) s: &'s str,
    pub(super) pos: usize,
    /// Inside `[…]`/`{…}`, plain scalars stop at `,`, `]`, `}`.
    pub(super) plain_stops: bool,
}

impl<'s> Flow<'s> {
    pub(super) fn new(s: &'s str) -> Flow<'s> {
        Flow {
            s,
            pos: 0,
            plain_stops: true,
        }
    }

    pub(super) fn skip_ws(&mut self) {
        while self.s[self.pos..].starts_with([' ', '\t']) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    pub(super) fn value(&mut self) -> Result<Yaml, FlowError> {
        self.skip_ws();
        match self.peek() {
            None => Err(FlowError::Eof),
            Some('[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    match self.peek() {
                        None => return Err(FlowError::Eof),
                        Some(']') => {
                            self.pos += 1;
                            return Ok(Yaml::Seq(items));
                        }
                        _ => items.push(self.value()?),
                    }
                    self.skip_ws();
                    match self.peek() {
                        None => return Err(FlowError::Eof),
                        Some(',') => self.pos += 1,
                        Some(']') => {}
                        _ => {
                            return Err(FlowError::At(
                                "missed comma between flow collection entries",
                                self.pos,
                            ))
                        }
                    }
                }
            }
            Some('{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                loop {
                    self.skip_ws();
                    match self.peek() {
                        None => return Err(FlowError::Eof),
                        Some('}') => {
                            self.pos += 1;
                            return Ok(Yaml::Map(entries));
                        }
                        _ => {}
                    }
                    let key = match self.value()? {
                        Yaml::Str(s) => s,
                        Yaml::Null => "null".into(),
                        other => format!("{other:?}"),
                    };
                    self.skip_ws();
                    let value = if self.peek() == Some(':') {
                        self.pos += 1;
                        self.skip_ws();
                        match self.peek() {
                            Some(',') | Some('}') => Yaml::Null,
                            _ => self.value()?,
                        }
                    } else {
                        Yaml::Null
                    };
                    entries.push((key, value));
                    self.skip_ws();
                    match self.peek() {
                        None => return Err(FlowError::Eof),
                        Some(',') => self.pos += 1,
                        Some('}') => {}
                        _ => {
                            return Err(FlowError::At(
                                "missed comma between flow collection entries",
                                self.pos,
                            ))
                        }
                    }
                }
            }
            Some('"') => self.double(),
            Some('\'') => self.single(),
            Some(']') | Some('}') if self.plain_stops => Err(FlowError::At(
                "unexpected end of a flow collection",
                self.pos,
            )),
            Some(_) => Ok(self.plain()),
        }
    }

    fn double(&mut self) -> Result<Yaml, FlowError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut chars = self.s[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Ok(Yaml::Str(out));
                }
                '\\' => match chars.next().map(|(_, e)| e) {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some('0') => out.push('\0'),
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(ch) => out.push(ch),
                            None => return Err(FlowError::At("unknown escape sequence", start)),
                        }
                    }
                    Some(e @ ('"' | '\\' | '/' | ' ')) => out.push(e),
                    Some(_) => return Err(FlowError::At("unknown escape sequence", start)),
                    None => return Err(FlowError::Eof),
                },
                c => out.push(c),
            }
        }
        Err(FlowError::Eof)
    }

    fn single(&mut self) -> Result<Yaml, FlowError> {
        self.pos += 1;
        let mut out = String::new();
        let rest = &self.s[self.pos..];
        let mut it = rest.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            if c == '\'' {
                if it.peek().map(|(_, n)| *n) == Some('\'') {
                    it.next();
                    out.push('\'');
                    continue;
                }
                self.pos += i + 1;
                return Ok(Yaml::Str(out));
            }
            out.push(c);
        }
        Err(FlowError::Eof)
    }

    fn plain(&mut self) -> Yaml {
        let rest = &self.s[self.pos..];
        let end = if self.plain_stops {
            rest.find([',', ']', '}']).unwrap_or(rest.len())
        } else {
            rest.len()
        };
        let end = match (self.plain_stops, rest[..end].find(": ")) {
            (true, Some(c)) => c,
            _ => {
                if self.plain_stops && rest[..end].ends_with(':') {
                    end - 1
                } else {
                    end
                }
            }
        };
        self.pos += end;
        resolve_plain(rest[..end].trim())
    }
}

/// The core schema's resolution of a plain scalar.
fn resolve_plain(s: &str) -> Yaml {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => Yaml::Null,
        "true" | "True" | "TRUE" => Yaml::Bool(true),
        "false" | "False" | "FALSE" => Yaml::Bool(false),
        _ => {
            let numeric = s
                .trim_start_matches(['-', '+'])
                .starts_with(|c: char| c.is_ascii_digit() || c == '.');
            match s.parse::<f64>() {
                Ok(n) if numeric && n.is_finite() => Yaml::Num(n),
                _ => Yaml::Str(s.to_owned()),
            }
        }
    }
}
