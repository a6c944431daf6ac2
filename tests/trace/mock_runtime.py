#!/usr/bin/env python3
"""A tiny stand-in runtime for the trace tests: the happy path of docs/CONTRACT.md#s3 to #s6
(no model), with switchable bugs and failure modes. Usage: mock_runtime.py [mode]. Not a reference: only what the
runner tests need."""
import json, os, sys, time, uuid

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
out = sys.stdout.buffer
sessions = {}  # id -> {"seq": n, "turn": n}


def write(obj):
    out.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
    out.flush()


def event(sid, typ, data):
    s = sessions[sid]
    write({"jsonrpc": "2.0", "method": "session.event",
           "params": {"sessionId": sid, "event": {"type": typ, "seq": s["seq"], "time": int(time.time() * 1000), "data": data}}})
    s["seq"] += 1


def status(sid, st):
    write({"jsonrpc": "2.0", "method": "session.status", "params": {"sessionId": sid, "status": st}})


def prompt(rid, params):
    sid = params.get("sessionId")
    new = sid not in sessions
    if new:
        sessions[sid] = {"seq": 0, "turn": 0, "history": []}
        event(sid, "permission/preset", {"preset": "workspace-write"})
    s = sessions[sid]
    mid = str(uuid.uuid4())
    blocks = params.get("contentBlocks", [])
    if mode == "replay" and s["history"]:
        for typ, data in s["history"]:
            event(sid, typ, data)
    receipt = {"target": "next-turn", "start": 0, "inserted": [{"content": blocks, "source": {"kind": "user"}, "role": "user", "id": mid}]}
    event(sid, "agent/inbox/spliced", receipt)
    status(sid, "running")
    if mode != "frozen-turn" or s["turn"] == 0:
        s["turn"] += 1
    turn = s["turn"]
    event(sid, "turn/start", {"turn": turn})
    event(sid, "agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})
    answer = str(uuid.uuid4()) if mode == "messageid" else mid
    write({"jsonrpc": "2.0", "id": rid, "result": {"messageId": answer}})
    if mode == "garbage":
        out.write(b"debug: model call starting\n")
        out.flush()
    text = blocks[-1].get("text", "") if blocks else ""
    reply = text[len("reply: "):] if text.startswith("reply: ") else text
    if mode == "early-idle":
        status(sid, "idle")
    event(sid, "assistant/message", {"turn": turn, "step": 1, "message": {"role": "assistant", "content": [{"type": "text", "text": reply}]}})
    event(sid, "turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    if mode != "early-idle":
        status(sid, "idle")
    s["history"] = [("turn/start", {"turn": turn}), ("turn/end", {"turn": turn, "reason": {"kind": "completed"}})]


def main():
    if mode == "crash":
        sys.stderr.write("mock: fatal error before answering\n")
        sys.exit(3)
    if mode == "close-stdout":
        os.close(1)
        time.sleep(30)
        return
    if mode == "flood":
        line = json.dumps({"jsonrpc": "2.0", "method": "noise", "params": {"pad": "x" * 1000}}).encode() + b"\n"
        chunk = line * 1000
        for _ in range(200):  # ~200 MB
            out.write(chunk)
        out.flush()
        time.sleep(30)
        return
    if mode == "hugeline":
        out.write(b'{"pad":"' + b"y" * (100 * 1024 * 1024) + b'"}\n')
        out.flush()
        time.sleep(30)
        return
    if mode == "badbytes":
        out.write(b'{"jsonrpc":"2.0","method":"x","params":{"v":"\xff\xfe"}}\n')
        out.flush()
        time.sleep(30)
        return
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        rid, method = msg.get("id"), msg.get("method")
        if not isinstance(rid, (str, int, float)) or isinstance(rid, bool) or not isinstance(method, str):
            continue
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if mode == "hang":
            continue
        if method == "initialize":
            write({"jsonrpc": "2.0", "id": rid, "result": {"serverInfo": {"name": "deepseek-harness-sdk-runtime", "version": "0.0.1"}}})
        elif method == "session/prompt":
            prompt(rid, params)
        elif method == "session/wait":
            write({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "shutdown":
            write({"jsonrpc": "2.0", "id": rid, "result": {}})
            sys.exit(0)
        else:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "unknown DeepSeek Harness SDK runtime method: " + method}})
    sys.exit(0)


# SIGINT → exit 130, the contract's code, through Python's own handler. Python installs that handler
# only when SIGINT is at its default action at start-up: if the runtime inherits SIGINT ignored, it
# never exits on SIGINT (the runner must start it clean).
try:
    main()
except KeyboardInterrupt:
    sys.exit(130)
