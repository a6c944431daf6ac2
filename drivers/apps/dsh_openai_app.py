#!/usr/bin/env python3
"""dsh-openai (an OpenAI-compatible HTTP bridge on the official SDK) as a one-prompt app for
`dsh-conformance client --app` (docs/CLIENT-DRIVERS.md, "App mode").

The bridge is built as it is served (its own app and session manager, its shipped editor patch,
`--profile sdk-minimal`); its launch code's one substitution point, the session manager's
harness factory, gives the SDK's ``DeepSeekHarness`` the kit's runtime (``dsh_bin`` = DSH_BIN).
It serves on 127.0.0.1, takes one chat completion request with the prompt
(DSH_CONFORMANCE_PROMPT), prints the answer's content and exits 0 (the bridge's 200 is its word
that the run succeeded); a failed request (another status, no answer) is printed on stderr and
exits 1. Then it stops the server and
closes the manager, as the bridge does when it is stopped.

    dsh-conformance client --app -- python3 drivers/apps/dsh_openai_app.py

The bridge's own settings come from its environment (``Settings.from_env``): its default profile,
sdk-minimal, offers no subagent tool, so the subagent scenarios cannot arise on it (UNTESTABLE);
``DSH_OPENAI_PROFILE=sdk`` serves the profile that has one, as the kit's test runs it.
"""

import dataclasses
import http.client
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

import dsh_openai
import uvicorn
from deepseek_harness import DeepSeekHarness
from dsh_openai.app import create_app
from dsh_openai.config import Settings
from dsh_openai.manager import SessionManager

prompt = os.environ["DSH_CONFORMANCE_PROMPT"]
work = Path(os.getcwd())
patch = str(Path(dsh_openai.__file__).parent / "patches" / "editor.patch.yml")
os.environ.setdefault("DEEPSEEK_API_KEY", "sk-dsh-conformance")
settings = dataclasses.replace(
    Settings.from_env(),
    workspace_root=work / "workspaces",
    dsh_home=Path(os.environ["DSH_HOME"]),
    patches=(patch,),
    redis_url=None,
    api_key=None,
)


def factory(**kwargs):
    return DeepSeekHarness(dsh_bin=os.environ["DSH_BIN"], **kwargs)


manager = SessionManager(settings, harness_factory=factory)
app = create_app(settings, manager=manager)
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.close()
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
thread = threading.Thread(target=server.run, daemon=True)
thread.start()
deadline = time.time() + 30
while not server.started and time.time() < deadline:
    time.sleep(0.05)

body = {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": prompt}]}
status, answer = 0, None
try:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    status, raw = r.status, r.read().decode("utf-8", "replace")
    answer = json.loads(raw) if status == 200 else raw
except Exception as exc:  # the request itself failed: the app reports it
    answer = f"{type(exc).__name__}: {exc}"

server.should_exit = True
thread.join(timeout=10)
close = getattr(manager, "close", None)
if close:
    close()

if status == 200 and isinstance(answer, dict) and answer.get("choices"):
    print(answer["choices"][0]["message"].get("content") or "")
    sys.exit(0)
print(f"dsh-openai: status {status}: {answer}", file=sys.stderr)
sys.exit(1)
