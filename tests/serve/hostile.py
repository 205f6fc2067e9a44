"""Hostile clients against `servesim serve` (tests/serve_endpoint.sh), on 127.0.0.1 only:
hostile.py PORT MAX_CONNECTIONS TIMEOUT_S ERRORS.md. Each case prints the statuses it got; after each,
a normal request must still be answered. Exits 1 on the first case that goes wrong.

  the rows of docs/errors.md's "servesim serve: HTTP answers", each with exactly its status
  and message: malformed JSON, a JSON array, unknown fields, n = 2, a prompt past max_model_len,
  a 10 MB body, a wrong model, a path outside the routes, a wrong method, a Host of another
  machine: their status and the OpenAI error object {"error": {message, type, param, code}};
  2000 connections at once: MAX_CONNECTIONS answered, the rest 503 (or waiting), none lost;
  slow clients (a byte a second, and ones that never finish their headers): closed after
  TIMEOUT_S while a normal request is answered meanwhile."""
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawhttp  # noqa: E402
from rawhttp import slow_clients  # noqa: E402

port, max_conns, timeout_s = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
# docs/errors.md, section "servesim serve: HTTP answers": test id -> (status, message)
ROWS = {}
for line in open(sys.argv[4], encoding="utf-8"):
    cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
    if len(cells) == 5 and cells[0].startswith("`serve-"):
        ROWS[cells[0].strip("`")] = (int(cells[3]), cells[4][1:-1])
HOST = "127.0.0.1"
failed = False


def fail(msg):
    global failed
    print("hostile: FAIL " + msg)
    failed = True


def request(method, path, body=b"", headers=None, host=None):
    return rawhttp.request(port, method, path, body, headers, host)


def completion(extra=None, path="/v1/completions"):
    b = {"prompt": "hello", "max_tokens": 4}
    b.update(extra or {})
    return request("POST", path, json.dumps(b).encode())


def still_serving(case):
    st, body = completion()
    if st != 200 or json.loads(body)["usage"]["completion_tokens"] != 4:
        fail("%s: the next normal request got %d %r" % (case, st, body[:200]))


def expect(case, got, want_status, want_param="-"):
    st, body = got
    row = ROWS.pop(case, None)
    if row is None:
        fail("%s: no row in docs/errors.md" % case)
        row = (want_status, None)
    try:
        e = json.loads(body)["error"]
        shape = set(e) >= {"message", "type", "param", "code"} and e["code"] == st
    except (ValueError, KeyError, TypeError):
        e, shape = {}, False
    ok = st == want_status == row[0] and shape and (want_param == "-" or e.get("param") == want_param)
    if row[1] is not None and e.get("message") != row[1]:
        ok = False
        print("hostile: %s: docs/errors.md says %r" % (case, row[1]))
    print("hostile: %-20s -> %d %s: %s" % (case, st, e.get("type", "?"), e.get("message", body[:80])))
    if not ok:
        fail("%s: want %d with an OpenAI error object, got %d %r" % (case, want_status, st, body[:200]))
    still_serving(case)


expect("serve-malformed", request("POST", "/v1/completions", b'{"prompt": "x", "max_tokens": }'), 400)
expect("serve-not-object", request("POST", "/v1/completions", b"[1, 2]"), 400)
expect("serve-unknown-field", completion({"frobnicate": 1}), 400, "frobnicate")
expect("serve-n", completion({"n": 2}), 400, "n")
expect("serve-max-tokens", completion({"max_tokens": 0}), 400, "max_tokens")
expect("serve-too-long", completion({"prompt": "x" * 600000}), 400, "prompt")
expect("serve-body-size", request("POST", "/v1/completions", b"{" + b" " * (10 << 20) + b"}"), 413)
expect("serve-model", completion({"model": "gpt-5"}), 404, "model")
expect("serve-not-found", request("GET", "/../../etc/passwd"), 404)
expect("serve-method", request("GET", "/v1/completions"), 405)
expect("serve-host", request("GET", "/v1/models", host="evil.example"), 403)
expect("serve-messages",
       request("POST", "/v1/chat/completions", b'{"messages": [], "max_tokens": 3}'), 400, "messages")

# 2000 connections at once, each sending a request: max_conns are answered, the rest get
# 503 (or wait in the listen backlog and are answered later); every one gets an answer.
N = 2000
statuses = [0] * N


bodies = {}


def conn_worker(k):
    try:
        st, body = completion({"max_tokens": 2})
        statuses[k] = st
        bodies.setdefault(st, body)
    except OSError:
        statuses[k] = -1


t0 = time.time()
threads = [threading.Thread(target=conn_worker, args=(k,)) for k in range(N)]
for t in threads:
    t.start()
for t in threads:
    t.join(120)
counts = {}
for s in statuses:
    counts[s] = counts.get(s, 0) + 1
print("hostile: %d connections at once (max %d) in %.1f s -> %s"
      % (N, max_conns, time.time() - t0, ", ".join("%s: %d" % kv for kv in sorted(counts.items()))))
if set(counts) - {200, 503} or counts.get(200, 0) < max_conns // 2:
    fail("2000 connections: statuses %s" % counts)
row = ROWS.pop("serve-connections")
if 503 in bodies and json.loads(bodies[503])["error"]["message"] != row[1]:
    fail("2000 connections: the 503 says %r, docs/errors.md %r" % (bodies[503], row[1]))
still_serving("2000 connections")

# Slow clients: 40 that trickle a header line a second and never finish, 40 that open and
# send nothing; a normal request is answered meanwhile, and all 80 are closed after the
# deadline (timeout_s) and not much later.
t0 = time.time()
st, closed_at = slow_clients(port, 40, 40, b"POST /v1/completions HTTP/1.1\r\n",
                             lambda: completion()[0], timeout_s * 4 + 5)
print("hostile: 80 slow clients holding connections; a normal request meanwhile -> %d" % st)
if st != 200:
    fail("slow clients: a normal request got %d" % st)
done = [c for c in closed_at if c is not None]
print("hostile: slow clients closed by the server: %d of %d, after %.1f to %.1f s (deadline %d s)"
      % (len(done), len(closed_at), min(done or [0]), max(done or [0]), timeout_s))
if len(done) != len(closed_at) or max(done) > timeout_s * 3 + 2:
    fail("slow clients: %d of %d closed" % (len(done), len(closed_at)))
still_serving("slow clients")

# A client that reads nothing of its stream (a small receive buffer): once its socket takes
# no more, the server keeps the rest and, after 3 x TIMEOUT_S without progress, closes it;
# its request is aborted in the simulation, a normal request is answered meanwhile.
def aborted():
    for line in request("GET", "/metrics")[1].decode().splitlines():
        if line.startswith("servesim:requests_aborted_total "):
            return float(line.split()[1])
    return -1


ab0 = aborted()
sk = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
sk.connect((HOST, port))
body = json.dumps({"prompt": "hello", "max_tokens": 100000, "ignore_eos": True, "stream": True}).encode()
sk.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
t0 = time.time()
st = completion()[0]
idle = timeout_s * 3
while aborted() == ab0 and time.time() - t0 < idle + 60:
    time.sleep(0.5)
waited = time.time() - t0
sk.settimeout(10)
got, end = 0, b""
try:
    while True:
        d = sk.recv(65536)
        if not d:
            break
        got += len(d)
        end = (end + d)[-64:]
except OSError:
    pass
sk.close()
print("hostile: a client reading nothing of a 100,000-token stream: a normal request meanwhile -> %d; "
      "aborted after %.1f s (%d s without progress closes it), %d bytes were in the sockets, "
      "the stream cut (no final chunk: %s)" % (st, waited, idle, got, b"0\r\n\r\n" not in end))
if st != 200 or aborted() != ab0 + 1 or waited < idle or b"0\r\n\r\n" in end:
    fail("a client reading nothing: not closed as it should be")
still_serving("a client reading nothing")
if ROWS:
    fail("rows of docs/errors.md no case sent: %s" % ", ".join(sorted(ROWS)))
print("hostile: %s" % ("FAIL" if failed else "ok: every case answered, the server still serving"))
sys.exit(1 if failed else 0)
