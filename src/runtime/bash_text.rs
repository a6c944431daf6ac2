//! The text side of the real `sdk-minimal` bash (`bash.rs`), sans-IO: how the release
//! (0.2.1rc2, `@deepseek-ai/dsh-tool-bash-persistent`) wraps a command between two markers,
//! cleans the terminal's output, cuts a command's output out of it, and words the tool result.

use super::shell::RESET_NOTE;

/// The release's bound on one command (its `sdk-minimal` profile sets `timeoutMs: 300000`).
pub const TIMEOUT_MS: u64 = 300_000;
/// Longest result output before it is clipped (`maxOutputChars`, UTF-16 units).
pub const MAX_OUTPUT_CHARS: usize = 16_000;
/// Appended to clipped output.
pub const TRUNCATED: &str = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";
/// The prompt the release gives the shell (`PS1`).
pub const PROMPT: &str = "dsh> ";
/// What `PROMPT_COMMAND` prints before each prompt (an OSC 133 `D` mark with the status).
pub const PROMPT_MARK: &str = "\x1b]133;D;";

/// The two markers of one command (unique per call).
#[derive(Debug, Clone)]
pub struct Markers {
    /// Printed before the command runs.
    pub start: String,
    /// Printed after it, followed by its status and a newline.
    pub end: String,
}

impl Markers {
    /// The markers for nonce `nonce`.
    pub fn new(nonce: &str) -> Markers {
        Markers {
            start: format!("__DSH_PERSISTENT_BASH_START_{nonce}__"),
            end: format!("__DSH_PERSISTENT_BASH_END_{nonce}:"),
        }
    }
}

/// `value` as a bash `$'…'` word.
fn quote(value: &str) -> String {
    let v = value
        .replace('\\', "\\\\")
        .replace('\'', "\\'")
        .replace('\r', "\\r")
        .replace('\n', "\\n");
    format!("$'{v}'")
}

/// The line the release types into the shell for `command`.
pub fn wrap(command: &str, m: &Markers) -> String {
    format!(
        "printf '%s\\n' {}; eval -- {}; __dsh_persistent_bash_status=$?; printf '%s%s\\n' {} \"$__dsh_persistent_bash_status\"",
        quote(&m.start),
        quote(command),
        quote(&m.end)
    )
}

/// Terminal output as text, as the release's sanitizer makes it: escape sequences (CSI, OSC,
/// two-byte) removed, `\r\n` and a lone `\r` as `\n` (recorded: `printf 'a\rb'` gives `a`, `b`).
pub fn clean(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for n in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(n) = chars.next() {
                        if n == '\x07' || (n == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => out.push('\n'),
            c => out.push(c),
        }
    }
    out
}

/// What a command printed: its text, whether its beginning was lost, its status when it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The output (stdout and stderr merged), trailing newlines trimmed.
    pub text: String,
    /// The start marker was not in the text (the beginning was dropped).
    pub incomplete: bool,
    /// The status after the end marker, once the command finished.
    pub exit_code: Option<i32>,
}

fn trim_trailing_newlines(s: &str) -> &str {
    s.trim_end_matches(['\r', '\n'])
}

fn after_first_newline(s: &str) -> &str {
    s.strip_prefix("\r\n")
        .or_else(|| s.strip_prefix('\n'))
        .unwrap_or(s)
}

/// The finished command's output in `text`, once its end marker and status are there.
pub fn finished(text: &str, m: &Markers) -> Option<Captured> {
    let end = text.rfind(&m.end)?;
    let rest = &text[end + m.end.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = &rest[digits.len()..];
    if digits.is_empty() || !(after.starts_with('\n') || after.starts_with("\r\n")) {
        return None;
    }
    let start = text[..end].rfind(&m.start);
    let from = start.map_or(0, |s| s + m.start.len());
    Some(Captured {
        text: trim_trailing_newlines(after_first_newline(&text[from..end])).to_owned(),
        incomplete: start.is_none(),
        exit_code: digits.parse().ok(),
    })
}

/// What a command printed so far (it did not finish: the shell exited, or time ran out).
pub fn partial(text: &str, m: &Markers) -> Captured {
    let (body, incomplete) = match text.rfind(&m.start) {
        Some(s) => (after_first_newline(&text[s + m.start.len()..]), false),
        None => (text, true),
    };
    let body = body.rfind(&m.end).map_or(body, |e| &body[..e]);
    Captured {
        text: trim_trailing_newlines(body).to_owned(),
        incomplete,
        exit_code: None,
    }
}

/// `content`, then `marker` on its own line (just the marker when there is no content).
fn with_marker(content: String, marker: Option<String>) -> String {
    match marker {
        None => content,
        Some(m) if content.is_empty() => m,
        Some(m) => format!("{content}\n{m}"),
    }
}

/// `s` cut to `max` UTF-16 units, never inside a surrogate pair.
fn clip(s: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &s[..i];
        }
    }
    s
}

/// The release's `renderCaptured`: clipped output, then `[Command finished with exit code N]`.
pub fn render(c: &Captured) -> String {
    let long = c.text.encode_utf16().count() > MAX_OUTPUT_CHARS;
    let mut body = if long || c.incomplete {
        format!("{}{TRUNCATED}", clip(&c.text, MAX_OUTPUT_CHARS))
    } else {
        c.text.clone()
    };
    if c.incomplete && !c.text.is_empty() {
        body = format!("<response clipped><NOTE>The beginning of this command output was dropped by the terminal scrollback limit. The following text is the earliest retained output.</NOTE>\n{body}");
    }
    let marker = c
        .exit_code
        .map(|n| format!("[Command finished with exit code {n}]"));
    with_marker(body, marker)
}

/// The result after the shell exited during the command (`code`, or killed by `signal`).
pub fn exited(c: &Captured, code: Option<i32>, signal: Option<&str>) -> String {
    let status = match (signal, code) {
        (Some(s), _) => format!("[shell killed by signal: {s}]"),
        (None, Some(n)) => format!("[shell exited: code {n}]"),
        (None, None) => "[shell exited]".to_owned(),
    };
    format!("{}\n{RESET_NOTE}", with_marker(render(c), Some(status)))
}

/// The result after the command ran out of time (`timeout_ms`).
pub fn timed_out(c: &Captured, timeout_ms: u64) -> String {
    let secs = (timeout_ms as f64 / 1000.0).round() as u64;
    format!(
        "Your command timed out after {secs} seconds or experienced an OOM error. Below is partial output:\n{}\n{RESET_NOTE}",
        with_marker(render(c), Some("[Command timed out or OOM]".into()))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_wrapped_and_cut_out_as_the_release_does() {
        let m = Markers::new("n");
        assert_eq!(
            wrap("echo 'a'\nls", &m),
            "printf '%s\\n' $'__DSH_PERSISTENT_BASH_START_n__'; eval -- $'echo \\'a\\'\\nls'; __dsh_persistent_bash_status=$?; printf '%s%s\\n' $'__DSH_PERSISTENT_BASH_END_n:' \"$__dsh_persistent_bash_status\""
        );
        let screen = clean("dsh> \x1b]133;D;0\x07__DSH_PERSISTENT_BASH_START_n__\r\nhi\r\n\r\n__DSH_PERSISTENT_BASH_END_n:3\r\n\x1b]133;D;3\x07dsh> ");
        assert_eq!(finished("__DSH_PERSISTENT_BASH_END_n:", &m), None);
        let c = finished(&screen, &m).unwrap();
        assert_eq!(render(&c), "hi\n[Command finished with exit code 3]");
        let c = finished(
            "__DSH_PERSISTENT_BASH_START_n__\n__DSH_PERSISTENT_BASH_END_n:0\n",
            &m,
        )
        .unwrap();
        assert_eq!(render(&c), "[Command finished with exit code 0]");
        assert_eq!(clean("50%\r100%\nok"), "50%\n100%\nok");
    }

    #[test]
    fn exits_timeouts_and_long_output_read_like_the_release() {
        let m = Markers::new("n");
        let c = partial("__DSH_PERSISTENT_BASH_START_n__\nout\nexit\n", &m);
        assert_eq!(
            exited(&c, Some(3), None),
            format!("out\nexit\n[shell exited: code 3]\n{RESET_NOTE}")
        );
        let c = partial("__DSH_PERSISTENT_BASH_START_n__\n", &m);
        assert_eq!(
            timed_out(&c, 1_400),
            format!("Your command timed out after 1 seconds or experienced an OOM error. Below is partial output:\n[Command timed out or OOM]\n{RESET_NOTE}")
        );
        let long = Captured {
            text: "é".repeat(MAX_OUTPUT_CHARS + 1),
            incomplete: false,
            exit_code: Some(0),
        };
        let r = render(&long);
        assert!(r.starts_with(&"é".repeat(MAX_OUTPUT_CHARS)));
        assert!(r.ends_with(&format!("{TRUNCATED}\n[Command finished with exit code 0]")));
    }
}
