#!/usr/bin/env bash
# The lab under slow and many clients (docs/lab.md), on 127.0.0.1, bounded in time and
# count, the server always stopped:
#   1. 32 slow clients (a header line a second, never finishing) and 16 silent ones hold
#      connections: requests from others are answered meanwhile, and every slow one is
#      closed within the lab's 10 s deadline to send a request (plus 3 s);
#   2. 200 concurrent runs of 2000 requests each from one address: every one answered,
#      none reset: the 64 the lab takes from one client run, queued for a CPU (one run at a
#      time per CPU), the rest get a 429 JSON error (or, on a loaded machine, a 503 one
#      saying to retry); at least half of the client's 64 run;
#   3. the server still answers after both.
set -u
servesim=$1
root=$2
. "$root/tests/lab_common.sh"
lab_need_python
lab_start "$servesim"
trap 'lab_stop; rm -rf "$LAB_LOG"' EXIT
"$PY" - "$LAB_PORT" "$root/tests/serve" <<'PY'
import json, socket, sys, threading, time
port = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])
import rawhttp
from rawhttp import slow_clients
bad = False

def get(path):
    return rawhttp.request(port, "GET", path, read_timeout=120)

RUN = "/api/run?scenario=clocks&set=workload.num_requests=20"
# 1. slow and silent clients
st, closed = slow_clients(port, 32, 16, b"GET /api/run HTTP/1.1\r\n", lambda: get(RUN)[0], 25)
print("lab_load: 48 slow clients holding connections; a run meanwhile -> %d" % st)
bad |= st != 200
done = [c for c in closed if c is not None]
print("lab_load: slow clients closed by the lab: %d of %d, after %.1f to %.1f s (deadline 10 s)"
      % (len(done), len(closed), min(done or [0]), max(done or [0])))
bad |= len(done) != len(closed) or max(done) > 13
# 2. 200 concurrent runs from this one address
N = 200
res = [None] * N
HEAVY = "/api/run?scenario=users&set=workload.num_requests=2000"
def worker(k):
    res[k] = get(HEAVY)
t0 = time.time()
th = [threading.Thread(target=worker, args=(k,)) for k in range(N)]
for t in th:
    t.start()
for t in th:
    t.join(150)
counts = {}
for st, body in res:
    counts[st] = counts.get(st, 0) + 1
    # every refusal is an answer with its JSON error, never a reset: 429 past the client's
    # 64 connections; 503 ("retry") when the server's connection table or its run queue is
    # full, which a loaded machine (slow runs, connections released late) can reach
    if st == 429 and "too many connections" not in json.loads(body)["error"]:
        bad = True
    if st == 503 and "retry" not in json.loads(body)["error"]:
        bad = True
print("lab_load: %d concurrent runs from one address in %.1f s -> %s"
      % (N, time.time() - t0, ", ".join("%s: %d" % kv for kv in sorted(counts.items()))))
bad |= set(counts) - {200, 429, 503} != set() or counts.get(200, 0) < 32
st, _ = get(RUN)
print("lab_load: a run after both -> %d" % st)
bad |= st != 200
print("lab_load: %s" % ("FAIL" if bad else "ok"))
sys.exit(1 if bad else 0)
PY
rc=$?
lab_stop
exit $rc
