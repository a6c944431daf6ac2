# Drives the reference runtime through the official Python SDK (issue item 5). Prints one JSON
# object per launch mode; tests/runtime/interop.rs asserts on it.
import json, sys, threading, time
from deepseek_harness import DeepSeekHarness, DeepSeekHarnessConfig
from deepseek_harness.errors import JsonRpcError

binary, home, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "dsh_bin":
    h = DeepSeekHarness(DeepSeekHarnessConfig(dsh_bin=binary, dsh_home=home))
else:
    h = DeepSeekHarness(DeepSeekHarnessConfig(env={"DSH_HOME": home}), _launch_args=(binary, "--profile", "sdk"))

def summary(r):
    ends = [e["data"] for e in r.events if e.get("type") == "turn/end"]
    return {"final": r.final_response, "finish": r.finish_reason,
            "turns": [e["turn"] for e in ends], "seqs": [e["seq"] for e in r.events],
            "types": [e["type"] for e in r.events]}

out = {"mode": mode}
h.start()
out["handshake"] = True
s = h.start_session("interop-" + mode)
out["run1"] = summary(s.run("reply: hello from the reference runtime"))
out["run2"] = summary(s.run("reply: second"))
results = {}
def go(name, text):
    results[name] = summary(h.start_session(name + "-" + mode).run(text))
threads = [threading.Thread(target=go, args=("a", "slow:1 reply: from A")),
           threading.Thread(target=go, args=("b", "reply: from B"))]
[t.start() for t in threads]
[t.join(30) for t in threads]
out["parallel"] = results
try:
    h.client._request_raw("probe/unknown", {})
    out["unknown"] = None
except JsonRpcError as e:
    out["unknown"] = {"code": e.code, "message": e.message}
proc = h.client._proc
t0 = time.monotonic()
h.close()
proc.wait(5)
out["close_seconds"] = time.monotonic() - t0
out["exit"] = proc.returncode
print(json.dumps(out))
