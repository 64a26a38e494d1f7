#!/usr/bin/env python3
"""control_request.py SESSION_DIR KIND — sends one raw request of KIND to a job's control socket
and prints the reply's "code" (or "ok"). KIND: good, metrics, wrong_token, malformed, oversize,
bad_version, unknown_command, silent (connects, sends half a line, never finishes). For good and
metrics, "ok" also needs the reply's shape: a snapshot lists the objects, metrics leaves them out
and keeps the figures."""
import json
import socket
import sys

sess, kind = sys.argv[1], sys.argv[2]
token = open(sess + "/control.token").read().strip()
req = {
    "good": json.dumps({"version": 1, "token": token, "command": "snapshot"}) + "\n",
    "metrics": json.dumps({"version": 1, "token": token, "command": "metrics"}) + "\n",
    "wrong_token": json.dumps({"version": 1, "token": "0" * 64, "command": "snapshot"}) + "\n",
    "malformed": '{"version": 1, "token": \n',
    "oversize": json.dumps({"version": 1, "token": token, "command": "snapshot",
                            "pad": "x" * (70 * 1024)}) + "\n",
    "bad_version": json.dumps({"version": 99, "token": token, "command": "snapshot"}) + "\n",
    "unknown_command": json.dumps({"version": 1, "token": token, "command": "shutdown"}) + "\n",
    "silent": '{"version": 1',
}[kind]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(20)
s.connect(sess + "/control.sock")
try:
    s.sendall(req.encode())
    if kind != "silent":
        s.shutdown(socket.SHUT_WR)
except (BrokenPipeError, ConnectionResetError):
    pass  # an oversize request may be cut short: the reply still comes
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
reply = json.loads(data)
assert reply["version"] == 1, reply
if reply["ok"] and kind in ("good", "metrics"):
    result = reply["result"]
    assert "metrics" in result and "objects_known" in result["metrics"], result.keys()
    assert ("objects" in result) == (kind == "good"), (kind, sorted(result.keys()))
print("ok" if reply["ok"] else reply["code"])
if not reply["ok"]:
    print(reply["error"], file=sys.stderr)
