#!/usr/bin/env python3
"""A hostile runtime: answers `initialize` correctly, then misbehaves as argv[1] says.

  flood    writes "a" lines on stdout forever (as `yes a` does)
  silent   reads on and never writes again
  exit3    exits with code 3
  setsid   starts a `setsid sleep` grandchild in a new session, then stays silent
  deaf     ignores SIGTERM and SIGINT, then stays silent
"""
import json, os, signal, subprocess, sys

mode = sys.argv[1] if len(sys.argv) > 1 else "silent"
if mode == "deaf":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
if mode == "setsid":
    subprocess.Popen(["setsid", "sleep", "600"], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
out = sys.stdout
for raw in sys.stdin:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    if isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg:
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                              "result": {"serverInfo": {"name": "hostile", "version": "0"}}},
                             separators=(",", ":")) + "\n")
        out.flush()
        sys.stderr.write("hostile: initialized, now %s\n" % mode)
        sys.stderr.flush()
        break
if mode == "flood":
    line = b"a\n" * 4096
    while True:
        os.write(1, line)
elif mode == "exit3":
    sys.exit(3)
for raw in sys.stdin:
    pass
