#!/usr/bin/env python3
"""A dsh-conformance client driver for dsh-conductor's JSON-RPC client (``conductor.dsh.DshClient``).

Reads one operation per line on stdin and writes one result per line on stdout
(docs/CLIENT-DRIVERS.md). DshClient launches the runtime it resolves itself: ``DshConfig.dsh_bin``,
else ``DSH_BIN``, else ``dsh`` on ``PATH``; the kit's shim is all three, and this driver leaves
``dsh_bin`` unset so that the client's own lookup finds it. Runs use conductor's own bound, the
``ConductorConfig.timeout_seconds`` default (3600 s), as ``conductor.sdk`` passes it.

It reports what DshClient returns to its caller, never what it could read off the wire: a run's
``finish`` is ``RunResult.status``, the value conductor itself acts on (``conductor.sdk`` fails a
run whose status is not ``"completed"``), not the reason kind kept in ``turn_end_reason``.

DshClient has no public request method besides ``run``: resume and the working-directory
operations go through its ``_rpc``, the path every request of it takes. ``_rpc`` writes its
request and then pumps the runtime's stdout itself, on the caller's thread, until the answer
comes: DshClient has no way to have two requests in flight, so ``concurrent`` is reported as
class ``unsupported``.

    dsh-conformance client -- python3.13 drivers/conductor/dsh_driver.py
"""

import json
import os
import sys
from pathlib import Path

from conductor.dsh import DshClient, DshConfig, DshError

RUN_TIMEOUT = 3600.0  # ConductorConfig.timeout_seconds
client = None

CLASSES = {
    "dsh_rpc_failed": "rpc",
    "dsh_process_exited": "transport",
    "dsh_start_failed": "transport",
    "dsh_protocol_error": "protocol",
    "timeout": "timeout",
}


def error(exc):
    if isinstance(exc, Unsupported):
        return {"class": "unsupported", "code": None, "message": str(exc)}
    if isinstance(exc, DshError):
        # The error response's code is kept only inside the message ("JSON-RPC request M
        # failed: CODE: MESSAGE"); DshError.code is the client's own classification.
        return {"class": CLASSES.get(exc.code, "other"), "code": None, "message": str(exc)}
    return {"class": "other", "code": None, "message": f"{type(exc).__name__}: {exc}"}


def rpc(method, params):
    return client._rpc(method, params, timeout_seconds=RUN_TIMEOUT)


def perform(op):
    global client
    kind = op.get("op")
    if kind == "start":
        config = DshConfig(workspace=Path(os.getcwd()), dsh_home=Path(os.environ["DSH_HOME"]))
        client = DshClient(config).start()
        client.initialize()
        return {}
    if kind == "close":
        if client is not None:
            client.close()
            client = None
        return {}
    if kind == "run":
        # A bounded run ("timeout", ms) is conductor's own bound on the run; else its default.
        bound = op["timeout"] / 1000 if "timeout" in op else RUN_TIMEOUT
        result = client.run(op["text"], session_id=op["session"], timeout_seconds=bound)
        return {
            "text": result.final_text,
            # The client's own word on how the run ended (its caller's), not the wire's kind.
            "finish": result.status,
            "events": [e.get("type") for e in result.events],
        }
    if kind == "prompt":
        blocks = [{"type": "text", "text": op["text"]}]
        return rpc("session/prompt", {"sessionId": op["session"], "contentBlocks": blocks})
    if kind == "resume":
        rpc("session/resume", {"sessionId": op["session"]})
        return {}
    if kind == "cwd-get":
        return rpc("session/working-directory/get", {"sessionId": op["session"]})
    if kind == "cwd-set":
        params = {"sessionId": op["session"], "path": op["path"]}
        return rpc("session/working-directory/set", params)
    if kind == "concurrent":
        raise Unsupported(
            "DshClient has no way to make two requests at once: _rpc writes its request and pumps "
            "the runtime's stdout on the caller's thread until the answer comes"
        )
    raise ValueError(f"operation {kind!r} is not supported by DshClient")


class Unsupported(Exception):
    """What the client's API has no way to do (the driver protocol's class ``unsupported``)."""


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        op = json.loads(line)
        try:
            result = dict(perform(op) or {})
            result["ok"] = True
        except BaseException as exc:  # every failure is a result, never the driver's end
            result = {"ok": False, "error": error(exc)}
        result["id"] = op.get("id")
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    if client is not None:
        client.close()


if __name__ == "__main__":
    main()
