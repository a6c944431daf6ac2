#!/usr/bin/env python3
"""A dsh-conformance client driver for the official Python SDK (deepseek-harness-sdk).

Reads one operation per line on stdin and writes one result per line on stdout
(docs/CLIENT-DRIVERS.md). The runtime is the one the kit gives in DSH_BIN (the SDK's
``dsh_bin``), its home DSH_HOME; the workspace is the current directory.

    dsh-conformance client -- python3 drivers/python/dsh_driver.py
"""

import json
import os
import sys
import threading

from deepseek_harness import DeepSeekHarness
from deepseek_harness.errors import JsonRpcError, SdkProtocolError, TransportClosedError

harness = None
out_lock = threading.Lock()


class Unsupported(Exception):
    """The SDK has no way to do what the operation asks."""


def error(exc):
    if isinstance(exc, Unsupported):
        return {"class": "unsupported", "code": None, "message": str(exc)}
    if isinstance(exc, JsonRpcError):
        return {"class": "rpc", "code": exc.code, "message": exc.message}
    if isinstance(exc, TransportClosedError):
        return {"class": "transport", "code": None, "message": str(exc)}
    if isinstance(exc, TimeoutError):
        return {"class": "timeout", "code": None, "message": str(exc)}
    if isinstance(exc, SdkProtocolError):
        return {"class": "protocol", "code": None, "message": str(exc)}
    return {"class": "other", "code": None, "message": f"{type(exc).__name__}: {exc}"}


def perform(op):
    global harness
    kind = op.get("op")
    if kind == "start":
        harness = DeepSeekHarness(
            dsh_bin=os.environ["DSH_BIN"], dsh_home=os.environ["DSH_HOME"], cwd=os.getcwd()
        )
        harness.start()
        return {}
    if kind == "close":
        if harness is not None:
            harness.close()
        return {}
    if kind == "run" and "timeout" in op:
        # Session.run(input, *, on_notification) has no deadline, and HarnessConfig's
        # request_timeout_seconds bounds requests only, not the wait for the run's idle.
        raise Unsupported("Session.run has no timeout: nothing bounds the wait for the run's idle")
    if kind == "run":
        result = harness.start_session(op["session"]).run(op["text"])
        return {
            "text": result.final_response,
            "finish": result.finish_reason,
            "events": [e.get("type") for e in result.events],
        }
    if kind == "prompt":
        blocks = [{"type": "text", "text": op["text"]}]
        return {"messageId": harness.client.session_prompt(op["session"], blocks)}
    if kind == "resume":
        harness.resume_session(op["session"])
        return {}
    if kind == "cwd-get":
        return {"cwd": harness.start_session(op["session"]).get_working_directory()}
    if kind == "cwd-set":
        return {"cwd": harness.start_session(op["session"]).set_working_directory(op["path"])}
    if kind == "concurrent":
        results = [None] * len(op["ops"])

        def one(i, sub):
            results[i] = answer(sub)

        threads = [threading.Thread(target=one, args=(i, sub)) for i, sub in enumerate(op["ops"])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return {"results": results}
    raise ValueError(f"unknown operation {kind!r}")


def answer(op):
    try:
        result = perform(op)
        result["ok"] = True
    except BaseException as exc:  # every failure is a result, never the driver's end
        result = {"ok": False, "error": error(exc)}
    return result


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        op = json.loads(line)
        result = answer(op)
        result["id"] = op.get("id")
        with out_lock:
            sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()
    if harness is not None:
        harness.close()


if __name__ == "__main__":
    main()
