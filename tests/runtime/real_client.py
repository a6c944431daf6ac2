"""A real client of the official SDK, dsh-openai (an OpenAI-compatible HTTP bridge), run on a
runtime through its own hooks, driven over 127.0.0.1; prints one JSON object of what a client of
the bridge sees. Usage: real_client.py <runtime executable> <work dir> [<model stub base url> <its key>]

The bridge's session manager accepts a harness factory: ours builds the SDK's DeepSeekHarness with
`dsh_bin` pointed at the runtime. The bridge launches it as it does in production
(`--profile sdk-minimal` with its shipped editor patch, a DSH_SYSTEM_PROMPT).
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

runtime, work = sys.argv[1], Path(sys.argv[2])
stub, stub_key = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else (None, None)

import dsh_openai
from deepseek_harness import DeepSeekHarness
from dsh_openai.app import create_app
from dsh_openai.config import Settings
from dsh_openai.manager import SessionManager
import uvicorn

patch = str(Path(dsh_openai.__file__).parent / "patches" / "editor.patch.yml")
env = {"DEEPSEEK_API_KEY": stub_key or "sk-dsh-conformance"}
if stub:
    env["DEEPSEEK_BASE_URL"] = stub
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
os.environ.update(env)

settings = dataclasses.replace(
    Settings.from_env(),
    workspace_root=work / "workspaces",
    dsh_home=work / "home",
    patches=(patch,),
    system_prompt="You are a test agent.",
    redis_url=None,
    initialize_timeout=60.0,
    request_timeout=120.0,
    api_key=None,
)


def factory(**kwargs):
    kwargs["env"] = {**(kwargs.get("env") or {}), **env}
    return DeepSeekHarness(dsh_bin=runtime, **kwargs)


manager = SessionManager(settings, harness_factory=factory)
app = create_app(settings, manager=manager)
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.close()
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
threading.Thread(target=server.run, daemon=True).start()
deadline = time.time() + 30
while not server.started and time.time() < deadline:
    time.sleep(0.05)


def post(body, stream=False):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=180)
    c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    raw = r.read().decode()
    c.close()
    if not stream or r.status != 200:
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, raw
    chunks = [json.loads(l[6:]) for l in raw.splitlines() if l.startswith("data: ") and l != "data: [DONE]"]
    return r.status, chunks


def chat(text, session, stream=False):
    body = {
        "model": "deepseek-v4-flash",
        "messages": [{"role": "user", "content": text}],
        "stream": stream,
        "user": "t",
    }
    return post({**body, "session_id": session} if session else body, stream)


def answer(status, body):
    if status != 200 or not isinstance(body, dict) or "choices" not in body:
        return {"status": status, "error": body if isinstance(body, (str, dict)) else str(body)}
    c = body["choices"][0]
    return {"status": status, "content": c["message"].get("content"), "finish": c.get("finish_reason")}


def streamed(status, chunks):
    if status != 200 or not isinstance(chunks, list):
        return {"status": status, "error": chunks}
    text = "".join((c["choices"][0].get("delta") or {}).get("content") or "" for c in chunks if c.get("choices"))
    finish = [c["choices"][0].get("finish_reason") for c in chunks if c.get("choices") and c["choices"][0].get("finish_reason")]
    return {"status": status, "content": text, "finish": finish[-1] if finish else None, "chunks": len(chunks)}


out = {
    "reply": answer(*chat("reply: hello from the bridge", None)),
    "stream": streamed(*chat("reply: streamed words", None, stream=True)),
    "maxtokens": answer(*chat("maxtokens", None)),
    "error400": answer(*chat("error400", None)),
    "tool": answer(*chat("tool: echo bridged", None)),
    # A real command on a file the model writes: sdk-minimal's bash is a real shell on both.
    "files": answer(*chat("tool: mkdir -p m && printf 'from the model\\n' > m/note.txt && ls m && tr a-z A-Z < m/note.txt", None)),
}
server.should_exit = True
manager_close = getattr(manager, "close", None)
if manager_close:
    manager_close()
print(json.dumps(out))
