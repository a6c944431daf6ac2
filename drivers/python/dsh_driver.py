#!/usr/bin/env python3
"""A dsh-conformance client driver for the official Python SDK (deepseek-harness-sdk).

Reads one operation per line on stdin and writes one result per line on stdout
(docs/CLIENT-DRIVERS.md). The runtime is the one the kit gives in DSH_BIN (the SDK's
``dsh_bin``, which every release has: the SDK then launches it instead of its bundled
runtime), its home DSH_HOME; the workspace is the current directory.

It reports what the SDK returns to its caller (RunResult's final_response, finish_reason and
events; the exception it raises, its type and fields), never what it could read off the wire.

It detects the API it runs on rather than reading a version: an SDK without
DeepSeekHarness.resume_session or Session.get_working_directory/set_working_directory (0.1.x)
answers those operations with class ``unsupported`` (the kit reports them "not supported by
this client"), and Session.run, which takes no timeout in any release, runs a bounded run
unbounded (saying so on stderr), so that the kit sees whether it hangs.

    dsh-conformance client -- python3 drivers/python/dsh_driver.py
"""

import json
import os
import sys
import threading

from deepseek_harness import DeepSeekHarness, Session
from deepseek_harness import errors as sdk_errors

harness = None
out_lock = threading.Lock()

# The SDK's exception types, those this release has (HarnessError's subclasses).
JsonRpcError = getattr(sdk_errors, "JsonRpcError", None)
TransportClosedError = getattr(sdk_errors, "TransportClosedError", None)
SdkProtocolError = getattr(sdk_errors, "SdkProtocolError", None)


class Unsupported(Exception):
    """The SDK has no way to do what the operation asks."""


def is_a(exc, cls):
    return cls is not None and isinstance(exc, cls)


def error(exc):
    if isinstance(exc, Unsupported):
        return {"class": "unsupported", "code": None, "message": str(exc)}
    if is_a(exc, JsonRpcError):
        return {"class": "rpc", "code": exc.code, "message": exc.message}
    if is_a(exc, TransportClosedError):
        return {"class": "transport", "code": None, "message": str(exc)}
    if isinstance(exc, TimeoutError):
        return {"class": "timeout", "code": None, "message": str(exc)}
    if is_a(exc, SdkProtocolError):
        return {"class": "protocol", "code": None, "message": str(exc)}
    return {"class": "other", "code": None, "message": f"{type(exc).__name__}: {exc}"}


def method(owner, name, what):
    """``owner.name``, or Unsupported when this SDK's API has no such method."""
    found = getattr(owner, name, None)
    if found is None:
        raise Unsupported(f"this SDK has no {what}.{name} (deepseek-harness-sdk {version()})")
    return found


def version():
    try:
        from importlib.metadata import version as of

        return of("deepseek-harness-sdk")
    except Exception:  # only for the message
        return "of unknown version"


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
        # request_timeout_seconds bounds requests only, not the wait for the run's idle: the run
        # goes unbounded, as the driver protocol asks, and the kit's own bound shows a hang.
        print(
            "dsh_driver: Session.run has no timeout (request_timeout_seconds bounds requests "
            "only): the bounded run is run unbounded",
            file=sys.stderr,
            flush=True,
        )
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
        method(harness, "resume_session", "DeepSeekHarness")(op["session"])
        return {}
    if kind == "cwd-get":
        method(Session, "get_working_directory", "Session")
        return {"cwd": harness.start_session(op["session"]).get_working_directory()}
    if kind == "cwd-set":
        method(Session, "set_working_directory", "Session")
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
