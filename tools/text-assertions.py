#!/usr/bin/env python3
"""Counts the test assertions that match human-readable text (issue 20, item 7).

Usage: tools/text-assertions.py [-f] [-v] [--scope tests|src] [ROOT]

Scope: every assertion macro (`assert!`, `assert_eq!`, `assert_ne!`, `prop_assert*!`,
insta's `assert_*snapshot!`) in tests/, and in src/ from a file's `#[cfg(test)]` on (and in
`*_tests.rs`), except src/rules/, src/wire/, src/check.rs and src/edition.rs. Commented-out
lines do not count.

Each assertion is one of:
  typed       its condition compares values: ids, enums, numbers, JSON members, collections;
  human-text  its condition searches or compares text a person reads: `contains`, `starts_with`,
              `ends_with`, `find`, `matches`, `lines()`, `trim()` on output, or equality with a
              literal that has a space in it (a sentence, a padded row, a `file:line`);
  wire-text   the same kinds of text tests, but on protocol data: a needle that is a JSON
              fragment or a trace line (not in a verdict's reason, a message or the CLI's
              output), or any text test in the modules of the reference runtime, the model stub
              and the mutants, whose outputs mirror upstream's bytes (an error message there is
              a wire field);
  snapshot    an insta snapshot.

A heuristic on the condition's source text, not on types: it is meant to be re-run before and
after a change, with the same rules, not to be exact. -v lists the human-text assertions, -f
counts them per file.
"""
import collections
import json
import os
import re
import sys

EXCLUDED = re.compile(r"^src/(rules|wire)/|^src/check\.rs$|^src/edition\.rs$")
MACRO = re.compile(
    r"\b((?:prop_)?assert(?:_eq|_ne|_matches)?|insta::assert_\w*snapshot|assert_\w*snapshot)!\s*[\(\[\{]"
)


def files(root):
    """(path, offset where its tests start) of every file in scope."""
    for d, _, fs in os.walk(os.path.join(root, "tests")):
        for f in fs:
            if f.endswith(".rs"):
                yield os.path.relpath(os.path.join(d, f), root), 0
    for d, _, fs in os.walk(os.path.join(root, "src")):
        for f in fs:
            p = os.path.relpath(os.path.join(d, f), root)
            if not f.endswith(".rs") or EXCLUDED.search(p):
                continue
            if f.endswith("_tests.rs"):
                yield p, 0
                continue
            i = open(os.path.join(root, p)).read().find("#[cfg(test)]")
            if i >= 0:
                yield p, i


def skip_string(s, i):
    """Index after the string literal starting at s[i] ("…", r#"…"#, b"…")."""
    j = i
    if s[j] == "b":
        j += 1
    if s[j] == "r":
        j += 1
        hashes = 0
        while s[j] == "#":
            hashes += 1
            j += 1
        end = s.index('"' + "#" * hashes, j + 1)
        return end + 1 + hashes
    j += 1
    while s[j] != '"':
        j += 2 if s[j] == "\\" else 1
    return j + 1


def split_args(s, i):
    """The top-level comma-separated arguments from s[i] to the matching close bracket."""
    depth, out, cur, j = 0, [], i, i
    while True:
        c = s[j]
        if c == '"' or (c in "rb" and re.match(r'b?r#*"|b"', s[j : j + 4]) and not re.match(r"\w", s[j - 1])):
            j = skip_string(s, j)
            continue
        if c == "'" and re.match(r"'(\\.|[^\\'])'", s[j : j + 4]):
            j = s.index("'", j + 2) + 1
            continue
        if c == "/" and s[j + 1] == "/":
            j = s.index("\n", j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                out.append(s[cur:j])
                return out
            depth -= 1
        elif c == "," and depth == 0:
            out.append(s[cur:j])
            cur = j + 1
        j += 1


def assertions(root):
    for p, start in sorted(files(root)):
        s = open(os.path.join(root, p)).read()
        for m in MACRO.finditer(s, start):
            if "//" in s[s.rfind("\n", 0, m.start()) + 1 : m.start()]:
                continue
            line = s.count("\n", 0, m.start()) + 1
            try:
                a = split_args(s, m.end())
            except (ValueError, IndexError) as e:
                print(f"cannot read {p}:{line}: {e}", file=sys.stderr)
                continue
            mac = m.group(1)
            n = 1 if mac in ("assert", "prop_assert") else 2
            if "snapshot" in mac:
                n = len(a)
            cond = re.sub(r"\s+", " ", ",".join(a[:n]).strip())
            yield {"file": p, "line": line, "macro": mac, "cond": cond}


# Modules whose outputs are protocol data mirroring upstream's bytes.
WIRE_FILES = re.compile(r"^(tests/runtime/|tests/model_stub/|src/runtime/|src/mutants/|tests/fuzz|tests/parse_once)")
# A text search with a string-ish needle: a literal, a format!, a variable or field.
SEARCH = re.compile(
    r"\.(contains|starts_with|ends_with|find|rfind|matches)\(\s*"
    r"(&?format!|&?(r#*)?\"|&?[a-z_][\w.]*(\(\))?\s*\)|&?[a-z_][\w.]*\.as_str\(\))"
)
LAYOUT = re.compile(r"\.lines\(\)|\.trim_end\(\)|\.trim\(\)")
# A needle that is a JSON fragment or a trace line, not prose.
WIREISH = re.compile(r'^(r#*")?\s*(\\?"?\{|>>|<<|\[|b")|\\":|":')
# Text a person reads: a verdict's reason, a failure message, the CLI's printed output.
HUMAN_SUBJECT = re.compile(
    r"\b(msg|reason|message\(\)|out|stdout|stderr|cause|hint|human\(\w*\))\s*\.(contains|starts_with|ends_with)"
)
# Membership in a collection of ids or names, not a text search.
MEMBER = re.compile(
    r'\.contains\(&"[^"]*"\.to_owned\(\)\)|\.contains\(&\w+\.as_str\(\)\)|\.contains\(&\w+\.id\)'
    r"|\.all\(\|\w+\| \w+(\.as_str\(\))?\.starts_with"
)


def top_level_pair(cond):
    depth, in_str, out, cur, i = 0, False, [], 0, 0
    while i < len(cond):
        c = cond[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(cond[cur:i])
            cur = i + 1
        i += 1
    out.append(cond[cur:])
    return out


def equals_text(cond, mac):
    """assert_eq!/assert_ne! against a literal with a space (or a format!) that is not JSON."""
    if mac not in ("assert_eq", "assert_ne", "prop_assert_eq"):
        return False
    sides = top_level_pair(cond)
    if len(sides) != 2:
        return False
    for side in sides:
        s = side.strip()
        literal = s.startswith(('"', "r#", "format!", 'Some("'))
        if literal and not WIREISH.search(s.removeprefix("Some(")):
            if re.search(r"\s", s) or s.startswith("format!"):
                return True
    return False


def needles_are_wire(cond):
    found = re.findall(r'\.(?:contains|starts_with|ends_with)\(\s*&?(r#*"[^#]*"#*|"(?:\\.|[^"\\])*")', cond)
    return bool(found) and all(WIREISH.search(x) for x in found)


def classify(a):
    cond, mac = a["cond"], a["macro"]
    if "snapshot" in mac:
        return "snapshot"
    text = bool(SEARCH.search(cond)) or bool(LAYOUT.search(cond)) or equals_text(cond, mac)
    if re.search(r"\.contains\(&?\*?[A-Z]|\.contains\(&\d|contains\(&b'|contains\(\*", cond) and not re.search(
        r'contains\(&?(format!|")', cond
    ):
        text = bool(LAYOUT.search(cond)) or equals_text(cond, mac)
    if text and MEMBER.search(cond) and not LAYOUT.search(cond):
        text = False
    if not text:
        return "typed"
    if WIRE_FILES.search(a["file"]):
        return "wire-text"
    if needles_are_wire(cond) and not HUMAN_SUBJECT.search(cond):
        return "wire-text"
    return "human-text"


def main(argv):
    flags = {a for a in argv if a.startswith("-")}
    rest = [a for a in argv if not a.startswith("-")]
    scope = None
    if "--scope" in argv:
        scope = argv[argv.index("--scope") + 1]
        rest.remove(scope)
    root = rest[0] if rest else "."
    counts = collections.Counter()
    by_file = collections.defaultdict(collections.Counter)
    for a in assertions(root):
        if scope and not a["file"].startswith(scope + "/"):
            continue
        k = classify(a)
        counts[k] += 1
        by_file[a["file"]][k] += 1
        if "-v" in flags and k == "human-text":
            print(f"{a['file']}:{a['line']}: {a['cond'][:160]}")
    total = sum(counts.values())
    print(f"{total} assertions; " + ", ".join(f"{k} {n} ({100 * n / total:.1f} %)" for k, n in counts.most_common()))
    if "-f" in flags:
        for f, c in sorted(by_file.items(), key=lambda x: (-x[1]["human-text"], x[0])):
            if c["human-text"]:
                print(f"  {c['human-text']:3d}/{sum(c.values()):3d} {f}")


if __name__ == "__main__":
    main(sys.argv[1:])
