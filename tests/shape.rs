//! The code's shape, as docs/ARCHITECTURE.md promises it: no function of the low layers
//! (`crates/`) longer than one screen explains.

use std::path::{Path, PathBuf};

/// The longest a function of `crates/` may be, its signature and closing brace included.
const MAX_LINES: usize = 120;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `(line, name, length)` of each function in `text`: from its `fn` line to the first line after
/// it that closes at the `fn` line's indentation (rustfmt's layout).
fn functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let Some(at) = t.find("fn ") else { continue };
        let head = &t[..at];
        let is_fn = head.split_whitespace().all(|w| {
            ["pub", "const", "unsafe", "async", "extern"].contains(&w) || w.starts_with("pub(")
        });
        if !is_fn || t.ends_with(';') {
            continue;
        }
        let indent = l.len() - t.len();
        let close = format!("{}}}", " ".repeat(indent));
        let Some(end) = (i + 1..lines.len()).find(|&j| lines[j].starts_with(&close)) else {
            continue;
        };
        let name: String = t[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        out.push((i + 1, name, end - i + 1));
    }
    out
}

#[test]
fn no_function_in_crates_is_longer_than_120_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 10, "{}", files.len());
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (line, name, n) in functions(&text) {
            if n > MAX_LINES {
                let rel = f.strip_prefix(&root).unwrap_or(f);
                long.push(format!(
                    "crates/{}:{line}: {name} is {n} lines",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_measure_counts_a_function_from_its_signature_to_its_brace() {
    let text =
        "fn a() {\n    1;\n}\n    pub(crate) fn b(\n        x: u8,\n    ) {\n    }\nfn c();\n";
    let got = functions(text);
    assert_eq!(got, [(1, "a".to_owned(), 3), (4, "b".to_owned(), 4)]);
}
