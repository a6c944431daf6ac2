//! A runtime's command line: the program and its arguments as OS strings (a Unix path or
//! argument need not be UTF-8), and how reports show them.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The program to run and its arguments, as the OS holds them: a Unix path or argument need not
/// be UTF-8 (reports print them with [`lossless_display`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// Executable (looked up on PATH when it has no slash).
    pub program: PathBuf,
    /// Arguments.
    pub args: Vec<OsString>,
}

impl CommandSpec {
    /// A command with no arguments. A relative path with a slash (`./rt`, `bin/rt`) is made
    /// absolute against the current directory: the runtime itself starts in a fresh case directory.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        let mut program: PathBuf = program.into();
        if program.is_relative() && program.components().count() > 1 {
            if let Ok(cwd) = std::env::current_dir() {
                program = cwd.join(program);
            }
        }
        CommandSpec {
            program,
            args: Vec::new(),
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    /// From `[program, args…]`, as typed on a command line. Since the runtime starts in a fresh
    /// case directory, an argument that is a relative path to an existing file of the caller's
    /// directory (`python3 my_runtime.py`, `node dist/main.js`) is made absolute too.
    pub fn from_argv<S: AsRef<OsStr>>(argv: &[S]) -> Option<Self> {
        let (p, rest) = argv.split_first()?;
        let mut c = CommandSpec::new(p.as_ref());
        let cwd = std::env::current_dir().ok();
        c.args = rest
            .iter()
            .map(|a| {
                let a = a.as_ref();
                match &cwd {
                    Some(cwd)
                        if !a.as_encoded_bytes().starts_with(b"-")
                            && Path::new(a).is_relative()
                            && cwd.join(a).is_file() =>
                    {
                        cwd.join(a).into_os_string()
                    }
                    _ => a.to_owned(),
                }
            })
            .collect();
        Some(c)
    }
}

/// `s` as text that tells every OS string apart: its UTF-8 as it is, each byte that is not
/// UTF-8 as `\xNN` (where `to_string_lossy` would make them all U+FFFD).
pub fn lossless_display(s: &OsStr) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for chunk in s.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// Shows the command line: its words, each by [`lossless_display`], spaced.
impl std::fmt::Display for CommandSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&lossless_display(self.program.as_os_str()))?;
        for a in &self.args {
            write!(f, " {}", lossless_display(a))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn a_command_line_that_is_not_utf8_is_shown_byte_for_byte() {
        let bad = |b: &[u8]| OsString::from_vec(b.to_vec());
        assert_eq!(lossless_display(&bad(b"a\xffb\xfe\xfd")), r"a\xffb\xfe\xfd");
        assert_eq!(lossless_display(OsStr::new("résumé")), "résumé");
        let cmd = CommandSpec::new("/opt/rt")
            .arg(bad(b"tag-\xfe"))
            .arg("--profile");
        assert_eq!(cmd.to_string(), r"/opt/rt tag-\xfe --profile");
        let argv = [bad(b"/x/\xff"), bad(b"-\xfe")];
        let c = CommandSpec::from_argv(&argv).unwrap();
        assert_eq!(c.program.into_os_string(), argv[0]);
        assert_eq!(c.args, [argv[1].clone()]);
    }
}
