//! The `sdk-minimal` bash tool (docs/CONTRACT.md#s13.6): one persistent, unconfined shell per
//! session behind a small seam ([`PersistentShell`]). [`ShellMode::Real`] (the default) is a real
//! bash as the release runs it (`bash.rs`); [`ShellMode::Emulated`] (`--shell emulated`,
//! for hermetic tests) is [`Shell`], emulated deterministically: no program is ever run; the
//! shell builtins that carry state or output (`echo`, `printf` of plain text, `cd`, `pwd`,
//! `export`, `unset`, `true`, `false`, `:`, `exit`, assignments) behave as bash's; any other
//! command name answers bash's "command not found" (127); pipes, substitutions, globs and file
//! redirections answer a reference-runtime refusal (status 2).
//!
//! The result text is the release's: the output (stdout and stderr merged), then
//! `[Command finished with exit code N]`; after `exit` bash prints `exit`, the shell is gone,
//! and the result says `[shell exited: code N]` and that the next call starts a fresh shell in
//! the session's working directory.

use std::collections::BTreeMap;

/// The note after a shell exited.
pub const RESET_NOTE: &str = "The persistent bash shell was reset; the next bash call starts from the workspace with a fresh current directory and environment.";

/// A session's persistent shell, whatever runs it.
pub trait PersistentShell {
    /// Runs one tool call's command; returns the tool result text and whether the shell is
    /// gone (the caller then drops it; the next call starts a fresh one).
    fn run(&mut self, command: &str) -> (String, bool);
}

/// Which shell runs `sdk-minimal`'s bash (`--shell real|emulated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellMode {
    /// A real bash, as the release runs it; each command bounded by `timeout_ms`.
    Real {
        /// The bound on one command (the release's: [`super::bash_text::TIMEOUT_MS`]).
        timeout_ms: u64,
    },
    /// The deterministic emulation ([`Shell`]): no program is run.
    Emulated,
}

impl Default for ShellMode {
    fn default() -> Self {
        ShellMode::Real {
            timeout_ms: super::bash_text::TIMEOUT_MS,
        }
    }
}

impl std::str::FromStr for ShellMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "real" => Ok(ShellMode::default()),
            "emulated" => Ok(ShellMode::Emulated),
            _ => Err(format!("unknown shell {s:?} (expected real or emulated)")),
        }
    }
}

/// Set when the process is going away (stdin ended, a signal): a running command is killed and
/// answers `""`, as the release's aborted commands do, so nothing waits out the bound.
#[derive(Debug, Clone, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// Cancels running and later commands.
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Starts session `session`'s shell in `cwd`; `Err` is the tool's error text.
pub fn start(
    mode: ShellMode,
    cwd: &str,
    session: &str,
    cancel: &Cancel,
) -> Result<Box<dyn PersistentShell>, String> {
    match mode {
        ShellMode::Emulated => Ok(Box::new(Shell::new(cwd))),
        ShellMode::Real { timeout_ms } => {
            super::bash::Bash::spawn(cwd, session, timeout_ms, cancel.clone())
                .map(|b| Box::new(b) as Box<dyn PersistentShell>)
                .map_err(|e| format!("Error: persistent bash shell did not start: {e}"))
        }
    }
}

impl PersistentShell for Shell {
    fn run(&mut self, command: &str) -> (String, bool) {
        Shell::run(self, command)
    }
}

/// One session's emulated shell state.
#[derive(Debug, Clone, Default)]
pub struct Shell {
    cwd: String,
    vars: BTreeMap<String, String>,
    status: i32,
}

enum Flow {
    Next,
    Exit(i32),
}

impl Shell {
    /// A fresh shell in `cwd`.
    pub fn new(cwd: &str) -> Shell {
        Shell {
            cwd: cwd.to_owned(),
            ..Shell::default()
        }
    }

    /// Runs one tool call's command; returns the tool result text and whether the shell exited
    /// (the caller then drops it).
    pub fn run(&mut self, command: &str) -> (String, bool) {
        let mut out = String::new();
        let mut exit = None;
        for (op, part) in split_list(command) {
            // `a && b`: b runs when a succeeded; `a || b`: when it failed (a skipped command
            // keeps the status, so `a && b || c` reads left to right as bash's).
            let run = match op {
                Op::Seq => true,
                Op::And => self.status == 0,
                Op::Or => self.status != 0,
            };
            if !run {
                continue;
            }
            if let Flow::Exit(code) = self.simple(part.trim(), &mut out) {
                exit = Some(code);
                break;
            }
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        match exit {
            Some(code) => {
                out.push_str(&format!("exit\n[shell exited: code {code}]\n{RESET_NOTE}"));
                (out, true)
            }
            None => {
                out.push_str(&format!(
                    "[Command finished with exit code {}]",
                    self.status
                ));
                (out, false)
            }
        }
    }

    fn simple(&mut self, cmd: &str, out: &mut String) -> Flow {
        if cmd.is_empty() {
            return Flow::Next;
        }
        if let Some(bad) = unsupported(cmd) {
            out.push_str(&format!("dsh-conformance reference runtime: `{bad}` is not emulated (the reference runs no programs; see docs/CONTRACT.md#s13.6)\n"));
            self.status = 2;
            return Flow::Next;
        }
        let mut words = Vec::new();
        let mut devnull = false;
        for w in split_words(cmd) {
            match w.raw.as_str() {
                ">&2" | "1>&2" | "2>&1" => {}
                ">/dev/null" | "1>/dev/null" => devnull = true,
                "2>/dev/null" => {}
                _ => words.push(self.expand(&w)),
            }
        }
        // Leading assignments.
        let mut i = 0;
        while i < words.len() {
            match words[i].split_once('=') {
                Some((k, v)) if is_name(k) && !words[i].starts_with('=') => {
                    if words.len() == 1 || i + 1 == words.len() {
                        self.vars.insert(k.to_owned(), v.to_owned());
                    }
                    i += 1;
                }
                _ => break,
            }
        }
        let words = &words[i..];
        let mut buf = String::new();
        let Some(name) = words.first() else {
            self.status = 0;
            return Flow::Next;
        };
        let args = &words[1..];
        self.status = match name.as_str() {
            "true" | ":" => 0,
            "false" => 1,
            "echo" => {
                let (newline, args) = match args.first().map(String::as_str) {
                    Some("-n") => (false, &args[1..]),
                    _ => (true, args),
                };
                buf.push_str(&args.join(" "));
                if newline {
                    buf.push('\n');
                }
                0
            }
            "printf" if args.len() == 1 && !args[0].contains('%') => {
                buf.push_str(&args[0].replace("\\n", "\n").replace("\\t", "\t"));
                0
            }
            "pwd" => {
                buf.push_str(&self.cwd);
                buf.push('\n');
                0
            }
            "cd" => self.cd(args.first().map(String::as_str), &mut buf),
            "export" => {
                for a in args {
                    if let Some((k, v)) = a.split_once('=') {
                        self.vars.insert(k.to_owned(), v.to_owned());
                    }
                }
                0
            }
            "unset" => {
                for a in args {
                    self.vars.remove(a);
                }
                0
            }
            "exit" => {
                return Flow::Exit(match args.first() {
                    None => self.status,
                    Some(a) => match a.parse::<i64>() {
                        Ok(n) => n.rem_euclid(256) as i32,
                        Err(_) => {
                            out.push_str(&format!("bash: exit: {a}: numeric argument required\n"));
                            2
                        }
                    },
                })
            }
            other => {
                buf.push_str(&format!("bash: {other}: command not found\n"));
                127
            }
        };
        if !devnull || name == "cd" || buf.starts_with("bash: ") {
            out.push_str(&buf);
        }
        Flow::Next
    }

    fn cd(&mut self, dir: Option<&str>, out: &mut String) -> i32 {
        let home = self
            .vars
            .get("HOME")
            .cloned()
            .unwrap_or_else(|| "/root".into());
        let normalized = match dir {
            None | Some("~") => super::cd::resolve("/", &home),
            Some(d) => super::cd::resolve(&self.cwd, d),
        };
        if super::cd::fs_path(&normalized).is_dir() {
            self.cwd = normalized;
            0
        } else {
            out.push_str(&format!(
                "bash: cd: {}: No such file or directory\n",
                dir.unwrap_or("")
            ));
            1
        }
    }

    fn expand(&self, w: &Word) -> String {
        let mut s = String::new();
        for (text, quoted_single) in &w.parts {
            if *quoted_single {
                s.push_str(text);
                continue;
            }
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '$' {
                    s.push(c);
                    continue;
                }
                let braced = chars.peek() == Some(&'{');
                if braced {
                    chars.next();
                }
                let mut name = String::new();
                if chars.peek() == Some(&'?') {
                    chars.next();
                    name.push('?');
                } else {
                    while let Some(&n) = chars.peek() {
                        if n.is_ascii_alphanumeric() || n == '_' {
                            name.push(n);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
                if braced && chars.peek() == Some(&'}') {
                    chars.next();
                }
                match name.as_str() {
                    "" => s.push('$'),
                    "?" => s.push_str(&self.status.to_string()),
                    n => s.push_str(self.vars.get(n).map_or("", String::as_str)),
                }
            }
        }
        s
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Syntax the emulation does not cover (outside quotes), as written.
fn unsupported(cmd: &str) -> Option<&'static str> {
    let mut single = false;
    let mut double = false;
    let b = cmd.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            _ if single => {}
            b'`' => return Some("`…`"),
            b'$' if b.get(i + 1) == Some(&b'(') => return Some("$(…)"),
            _ if double => {}
            b'|' => return Some("|"),
            b'<' => return Some("<"),
            b'*' => return Some("glob"),
            b'?' if i == 0 || b[i - 1] != b'$' => return Some("glob"),
            b'&' if b.get(i + 1) != Some(&b'2') && (i == 0 || b[i - 1] != b'>') => {
                return Some("&")
            }
            b'>' => {
                let rest = &cmd[i..];
                let ok = [">&2", ">/dev/null", ">&1"]
                    .iter()
                    .any(|r| rest.starts_with(r));
                if !ok {
                    return Some(">");
                }
            }
            b'(' | b')' | b'{' | b'}' if i == 0 || b[i - 1] == b' ' => return Some("( )"),
            _ => {}
        }
    }
    None
}

#[derive(Clone, Copy)]
enum Op {
    Seq,
    And,
    Or,
}

/// Splits a command list at `;`, newlines, `&&` and `||` (outside quotes).
fn split_list(cmd: &str) -> Vec<(Op, &str)> {
    let mut parts = Vec::new();
    let (mut single, mut double) = (false, false);
    let (mut start, mut op) = (0, Op::Seq);
    let b = cmd.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b';' | b'\n' if !single && !double => {
                parts.push((op, &cmd[start..i]));
                op = Op::Seq;
                start = i + 1;
            }
            b'&' | b'|' if !single && !double && b.get(i + 1) == Some(&c) => {
                parts.push((op, &cmd[start..i]));
                op = if c == b'&' { Op::And } else { Op::Or };
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push((op, &cmd[start..]));
    parts
}

/// A word: its pieces (text, single-quoted) and the raw source (for redirections).
struct Word {
    raw: String,
    parts: Vec<(String, bool)>,
}

fn split_words(cmd: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut cur: Option<Word> = None;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        if c == ' ' || c == '\t' {
            words.extend(cur.take());
            continue;
        }
        let w = cur.get_or_insert_with(|| Word {
            raw: String::new(),
            parts: Vec::new(),
        });
        match c {
            '\'' => {
                let t: String = chars.by_ref().take_while(|&c| c != '\'').collect();
                w.raw.push_str(&format!("'{t}'"));
                w.parts.push((t, true));
            }
            '"' => {
                let mut t = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => t.extend(chars.next()),
                        c => t.push(c),
                    }
                }
                w.raw.push('"');
                w.parts.push((t, false));
            }
            '\\' => {
                let e: String = chars.next().into_iter().collect();
                w.raw.push_str(&e);
                w.parts.push((e, true));
            }
            c => {
                w.raw.push(c);
                match w.parts.last_mut() {
                    Some((t, false)) => t.push(c),
                    _ => w.parts.push((c.to_string(), false)),
                }
            }
        }
    }
    words.extend(cur);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sh: &mut Shell, cmd: &str) -> String {
        sh.run(cmd).0
    }

    #[test]
    fn results_read_like_the_release() {
        let mut sh = Shell::new("/");
        assert_eq!(
            run(&mut sh, "echo hi"),
            "hi\n[Command finished with exit code 0]"
        );
        assert_eq!(run(&mut sh, "true"), "[Command finished with exit code 0]");
        assert_eq!(run(&mut sh, "false"), "[Command finished with exit code 1]");
        assert_eq!(
            run(&mut sh, "echo -n x"),
            "x\n[Command finished with exit code 0]"
        );
        assert_eq!(
            run(&mut sh, "false; echo \"st=$?\""),
            "st=1\n[Command finished with exit code 0]"
        );
        assert_eq!(
            run(&mut sh, "X=1; echo \"[$X]\" ${X} '$X'"),
            "[1] 1 $X\n[Command finished with exit code 0]"
        );
        assert_eq!(
            run(&mut sh, "echo a && false || echo b"),
            "a\nb\n[Command finished with exit code 0]"
        );
        assert_eq!(
            run(&mut sh, "nosuchcmd_zz"),
            "bash: nosuchcmd_zz: command not found\n[Command finished with exit code 127]"
        );
        assert_eq!(run(&mut sh, "cd /nonexistent/zz"), "bash: cd: /nonexistent/zz: No such file or directory\n[Command finished with exit code 1]");
    }

    #[test]
    fn state_persists_until_the_shell_exits() {
        let mut sh = Shell::new("/");
        assert_eq!(
            run(&mut sh, "cd /tmp && export FOO=bar"),
            "[Command finished with exit code 0]"
        );
        assert_eq!(
            run(&mut sh, "pwd; echo \"foo=$FOO\""),
            "/tmp\nfoo=bar\n[Command finished with exit code 0]"
        );
        let (text, gone) = sh.run("echo out; echo err >&2; exit 3");
        assert!(gone);
        assert_eq!(
            text,
            format!("out\nerr\nexit\n[shell exited: code 3]\n{RESET_NOTE}")
        );
        assert!(sh.run("ls | wc").0.contains("`|` is not emulated"));
        assert_eq!(
            run(&mut sh, "false || echo $?"),
            "1\n[Command finished with exit code 0]"
        );
    }
}
