#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets from recorded transcripts of the real runtime.

Usage: fuzz/seed-corpora.py <traces-dir> [<out-corpus-dir>]   (default out: fuzz/corpus beside this file)

Also copies the repository's golden traces (fixtures/**/*.trace) into the trace_parse corpus.
runtime_session has no seeds from here: its inputs are `arbitrary` bytes, seeded by fuzzing itself.

<traces-dir> is a folder whose subfolders hold raw transcripts of the real runtime, such as
fixtures/real-0.2.1rc2 (its raw/ has both layouts: `line`/`b64`/`partial`/`nonl` fields, and
`contract-s*.jsonl` with `raw` fields). Seeds are named by content hash, so re-running only adds.
Long lines are cut to a prefix: committed corpora stay small (the fuzzer finds length by itself).
"""

import base64
import glob
import hashlib
import json
import os
import sys

MAX_SEED = 4096
MAX_STREAM = 8192

# docs/CONTRACT.md#s2.1 and #s2.2 edges that no recording holds verbatim.
EDGES = [
    b'{"jsonrpc":"2.0","id":1e400,"method":"probe/inf"}\n',
    b'{"jsonrpc":"2.0","id":-0,"method":"probe/negzero"}\n',
    b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"m"}\n',
    b'{"id":"dup","id":"dup2","method":"m"}\n',
    b'{"id":4,"method":"m","id":null}\n',
    b'{"id":1,"method":5}\n',
    b'{"id":1,"error":[],"result":2}\n',
    b'{"id":1,"error":{"code":1e400,"message":7,"data":{"d":[1]}}}\n',
    b'{"id":"\\ud800","method":"\\udbff\\udfff","params":{"\\ud800":1,"\\udc00":2}}\n',
    # Held text's reserved block (crates/protocol/src/wire/json/held.rs): genuine characters beside
    # lone escapes.
    b'{"id":"\xf4\x8f\xa0\x80\\ud800","method":"\xf4\x8f\x9f\xbf","params":{"\\udbfe\\udc00":1,"\\ud800":2}}\n',
    b'{"id":"\\udbfd\\udfff\\udfff","result":{"\\ud800":"\\ud801","\\ud801":"\\ud800"}}\n',
    b'{"id":"x","method":"m","params":{"a":"\\u0000\\u2028\\"\\\\"}}\n',
    b'\xef\xbb\xbf{"id":"bom","method":"m"}\xe2\x80\xa8\xc2\xa0\r\n',
    b'A\rB\n{"id":"cr","method":"m"}\r\r\n',
    b'{"id":"\xe2\x82\xac","method":"\xff\xfe"}\n',
    b'[{"jsonrpc":"2.0","id":5,"method":"probe/x"}]\n',
    b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n',
    b'{"id":1,"method":"m","params":' + b'{"a":' * 120 + b'1' + b'}' * 120 + b'}\n',
    b'1e400\nnull\n"s"\ntrue\n-0.0e-0\n',
    b'{"id":1.5e-7,"method":"m"}\n{"id":1e21,"method":"m"}\n',
    b'{"jsonrpc":"2.0","id":"tail","method":"probe/tail"}',
]


def seed_name(data):
    return hashlib.sha1(data).hexdigest()[:16]


def write(dirname, data):
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, seed_name(data)), "wb") as f:
        f.write(data)


def frames(path):
    """(dir, bytes as written on the pipe) for every line of one transcript."""
    for text in open(path, encoding="utf-8"):
        o = json.loads(text)
        d = o.get("dir")
        if d not in ("in", "out"):
            continue
        if "raw" in o:
            yield d, o["raw"].encode("utf-8", "surrogatepass")
            continue
        if "b64" in o:
            data = base64.b64decode(o["b64"])
        elif "line" in o:
            data = o["line"].encode("utf-8", "surrogatepass")
        else:
            continue
        if not (o.get("partial") or o.get("nonl") or o.get("note")):
            data += b"\n"
        yield d, data


def main():
    traces = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "corpus")
    files = sorted(glob.glob(os.path.join(traces, "*", "*.jsonl")))
    # classify_line: every distinct client line, a few server frames of each kind, the edges.
    seen_kinds = {}
    lines = set(EDGES)
    streams = []
    for path in files:
        stream = b""
        for d, data in frames(path):
            data = data[:MAX_SEED]
            if d == "in":
                lines.add(data)
                stream += data
                continue
            try:
                j = json.loads(data)
                params = j.get("params") if isinstance(j.get("params"), dict) else {}
                kind = (j.get("method"), (params.get("event") or {}).get("type"), "id" in j, "error" in j)
            except ValueError:
                kind = "truncated"
            best = seen_kinds.setdefault(kind, [])
            if len(best) < 2:
                best.append(data)
        if stream:
            streams.append(stream[:MAX_STREAM])
    for group in seen_kinds.values():
        lines.update(group)
    for data in sorted(lines):
        write(os.path.join(out, "classify_line"), data)
    # line_stream: each transcript's input stream, cut in a few ways under a few line bounds.
    bounds = [0xFF, 16, 64, 127]
    cuts = [[], [1, 1, 1], [7, 0, 200], [3, 250, 2, 2, 2, 90, 1]]
    for i, stream in enumerate(streams + EDGES):
        header = bytes([bounds[i % len(bounds)], len(cuts[i % len(cuts)])] + cuts[i % len(cuts)])
        write(os.path.join(out, "line_stream"), header + stream)
    # trace_parse: the golden traces as they are.
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
    for path in sorted(glob.glob(os.path.join(fixtures, "**", "*.trace"), recursive=True)):
        with open(path, "rb") as f:
            write(os.path.join(out, "trace_parse"), f.read()[:MAX_STREAM])


if __name__ == "__main__":
    main()
