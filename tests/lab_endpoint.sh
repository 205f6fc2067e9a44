#!/usr/bin/env bash
# The lab's JSON API against the command line (docs/lab.md), on a server started here on
# a free port and stopped at the end:
#   1. /api/run with overrides answers exactly `servesim run` with the same overrides: the
#      whole result JSON, and the charts byte for byte as `--report` writes them;
#   2. a lesson's numbers equal `servesim run` of the command (and of the YAML) the page's
#      "copy as scenario" gives (clocks; and tail, the simulator's fan-out tasks);
#   3. concurrent requests answer exactly what each answers alone;
#   4. bad parameters are a 400 with a one-line message, and the server keeps serving;
#   5. SIGTERM stops it cleanly: exit status 0, nothing left listening.
set -u
servesim=$1
root=$2
. "$root/tests/lab_common.sh"
lab_need_python
tmp=$(mktemp -d)
lab_start "$servesim"
trap 'lab_stop; rm -rf "$LAB_LOG" "$tmp"' EXIT
fail=0

# 1. /api/run = servesim run --json (+ --report charts)
st=$(lab_get '/api/run?scenario=users&set=workload.max_concurrency=32&set=workload.num_requests=300' "$tmp/api.json")
[ "$st" = 200 ] || { echo "lab_endpoint: /api/run answered $st: $(cat "$tmp/api.json")"; exit 1; }
(cd "$root" && "$servesim" run scenarios/lab/users.yaml --set workload.max_concurrency=32 \
    --set workload.num_requests=300 --json "$tmp/run.json" --report "$tmp/rep.html" --quiet) || exit 1
"$PY" - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
api = json.load(open(d + "/api.json"))
run = json.load(open(d + "/run.json"))
if api["result"] != run:
    bad = [k for k in run if api["result"].get(k) != run[k]]
    print("lab_endpoint: FAIL /api/run differs from servesim run --json in", bad[:8])
    sys.exit(1)
for name in ("ttft-cdf", "tpot-cdf", "breakdown"):
    if api["charts"][name] != open(d + "/rep-" + name + ".svg").read():
        print("lab_endpoint: FAIL chart", name, "differs from --report's rep-%s.svg" % name)
        sys.exit(1)
print("lab_endpoint: /api/run users (max_concurrency=32, num_requests=300) = servesim run --json:"
      " %d keys, %d latencies, mean TTFT %.3f ms, output %.1f tok/s; 3 charts = --report's SVGs"
      % (len(run), len(run["latencies"]), run["mean_ttft_ms"], run["output_throughput"]))
print("lab_endpoint: server time %.1f ms" % api["elapsed_ms"])
PY

# 2. a lesson's numbers = servesim run of its "copy as scenario" command and YAML
st=$(lab_get '/api/lesson?tab=clocks&prompt=4096&reply=512&gpu=h200' "$tmp/lesson.json")
[ "$st" = 200 ] || { echo "lab_endpoint: /api/lesson answered $st: $(cat "$tmp/lesson.json")"; exit 1; }
"$PY" - "$tmp" <<'PY' >"$tmp/sets" || fail=1
import json, sys
l = json.load(open(sys.argv[1] + "/lesson.json"))
r = l["runs"][0]
open(sys.argv[1] + "/copy.yaml", "w").write(r["yaml"])
for s in r["sets"]:
    print(s)
PY
mapfile -t sets <"$tmp/sets"
args=()
for s in "${sets[@]}"; do args+=(--set "$s"); done
(cd "$root" && "$servesim" run scenarios/lab/clocks.yaml "${args[@]}" --json "$tmp/clocks.json" --quiet) || exit 1
"$servesim" run "$tmp/copy.yaml" --json "$tmp/copy.json" --quiet || exit 1 # reads no files
"$PY" - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
n = json.load(open(d + "/lesson.json"))["numbers"]
for f in ("clocks.json", "copy.json"):
    r = json.load(open(d + "/" + f))
    got = (n["ttft_ms"], n["tpot_ms"], n["e2el_ms"])
    want = (r["mean_ttft_ms"], r["mean_tpot_ms"], r["mean_e2el_ms"])
    if got != want:
        print("lab_endpoint: FAIL lesson clocks numbers", got, "!= servesim run (%s)" % f, want)
        sys.exit(1)
print("lab_endpoint: lesson clocks (prompt 4096, reply 512, h200): TTFT %.3f ms, TPOT %.3f ms,"
      " E2E %.1f ms = servesim run of its command and of its copied YAML" % got)
PY

# 2b. the tail lesson (slow 5%, k 10) runs real fan-out tasks: its per-call and per-task
#     numbers are servesim run's own (E2EL, servesim.sessions) for its copied YAML, saved
#     next to the CSV it reads; the task P95 is the P99 of calls, far above the call P95
st=$(lab_get '/api/lesson?tab=tail&slow=5&k=10' "$tmp/tail.json")
[ "$st" = 200 ] || { echo "lab_endpoint: /api/lesson?tab=tail answered $st: $(cat "$tmp/tail.json")"; exit 1; }
mkdir -p "$tmp/tail" && cp "$root/scenarios/lab/tail-replies.csv" "$tmp/tail/"
"$PY" - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
l = json.load(open(d + "/tail.json"))
open(d + "/tail/copy.yaml", "w").write(l["runs"][0]["yaml"])
PY
"$servesim" run "$tmp/tail/copy.yaml" --json "$tmp/tail.run.json" --quiet || exit 1
"$PY" - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
n = json.load(open(d + "/tail.json"))["numbers"]
r = json.load(open(d + "/tail.run.json"))
s = r["servesim"]["sessions"]
want = {"call_mean_ms": r["mean_e2el_ms"], "call_p95_ms": 1e3 * s["call_latency_p95_s"],
        "call_p99_ms": 1e3 * s["call_latency_p99_s"], "task_mean_ms": 1e3 * s["duration_mean_s"],
        "task_p95_ms": 1e3 * s["duration_p95_s"], "task_p99_ms": 1e3 * s["duration_p99_s"],
        "tasks": s["complete"], "calls": s["calls_done"]}
bad = [k for k in want if n[k] != want[k]]
if bad or s["shape"] != "fanout" or s["sessions"] != 180 or s["calls_done"] != 1800:
    print("lab_endpoint: FAIL lesson tail numbers differ from servesim run of its YAML:", bad, s["shape"])
    sys.exit(1)
# the run's call P95 equals the request-level P95 E2EL (every call completed)
if abs(n["call_p95_ms"] - r["p95_e2el_ms"]) > 1e-6 * r["p95_e2el_ms"]:
    print("lab_endpoint: FAIL call P95 %r != p95_e2el_ms %r" % (n["call_p95_ms"], r["p95_e2el_ms"]))
    sys.exit(1)
if not n["task_p95_ms"] > 3 * n["call_p95_ms"]:
    print("lab_endpoint: FAIL tail at scale: task P95 %.0f ms is not far above call P95 %.0f ms"
          % (n["task_p95_ms"], n["call_p95_ms"]))
    sys.exit(1)
print("lab_endpoint: lesson tail (slow 5%%, k 10): 180 fan-out tasks of 10 calls; call mean/P95/P99"
      " %.0f/%.0f/%.0f ms, task %.0f/%.0f/%.0f ms = servesim run of its copied YAML"
      % tuple(n[k] for k in ("call_mean_ms", "call_p95_ms", "call_p99_ms", "task_mean_ms",
                             "task_p95_ms", "task_p99_ms")))
PY

# 3. concurrent requests share nothing: four different runs at once answer what each
#    answers alone (the runs above ran alone)
pids=()
for i in 1 2 3 4; do
    lab_get "/api/run?scenario=users&set=workload.max_concurrency=$((8 * i))&set=workload.num_requests=300" "$tmp/par$i.json" >"$tmp/par$i.st" &
    pids+=($!)
done
lab_get '/api/run?scenario=users&set=workload.max_concurrency=32&set=workload.num_requests=300' "$tmp/par0.json" >"$tmp/par0.st"
wait "${pids[@]}" # not the server
for i in 1 2 3 4; do
    st=$(lab_get "/api/run?scenario=users&set=workload.max_concurrency=$((8 * i))&set=workload.num_requests=300" "$tmp/seq$i.json")
    [ "$st" = 200 ] && [ "$(cat "$tmp/par$i.st")" = 200 ] || { echo "lab_endpoint: FAIL concurrent run $i: $st"; fail=1; }
done
"$PY" - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
for i in range(1, 5):
    a = json.load(open("%s/par%d.json" % (d, i)))
    b = json.load(open("%s/seq%d.json" % (d, i)))
    if a["result"] != b["result"] or a["charts"] != b["charts"]:
        print("lab_endpoint: FAIL run %d answered differently when run concurrently" % i)
        sys.exit(1)
if json.load(open(d + "/par0.json"))["result"] != json.load(open(d + "/api.json"))["result"]:
    print("lab_endpoint: FAIL a run answered differently next to four others")
    sys.exit(1)
print("lab_endpoint: 5 concurrent /api/run requests answered exactly as each alone")
PY

# 4. bad parameters: 400 and the message; the server keeps serving
while IFS='|' read -r path code want; do
    [ -z "$path" ] && continue
    st=$(lab_get "$path" "$tmp/err.json")
    msg=$(sed -n 's/^{"error":"\(.*\)"}$/\1/p' "$tmp/err.json")
    if [ "$st" != "$code" ] || [[ "$msg" != *"$want"* ]] || [ "$(printf '%s' "$msg" | wc -l)" -ne 0 ]; then
        echo "lab_endpoint: FAIL $path: got $st '$msg', expected $code '...$want...'"
        fail=1
    else
        echo "lab_endpoint: $code $path -> $msg"
    fi
done <<'CASES'
/api/run?scenario=clocks&set=workload.bogus=1|400|unknown key 'workload.bogus'
/api/run?scenario=clocks&set=workload.rate=-3|400|workload.rate
/api/run?scenario=clocks&set=workload.num_requests=1000000|400|more than this lab request may simulate
/api/run?scenario=clocks&set=workload.output=10000000|400|the lab allows at most 32768
/api/run?scenario=clocks&set=hardware.replicas=500|400|the lab runs at most 64
/api/run?scenario=../quickstart|400|not a lab scenario
/api/run?scenario=clocks&set=workload.trace.file=/etc/passwd|400|the lab reads no files
/api/run?scenario=clocks&set=model=x.json|400|'.json' is not allowed in a key or value
/api/run?scenario=batching-continuous&set=workload.num_requests=4000&set=workload.input=129000&set=workload.output=2000|400|are 1.05e+12 token-steps; the lab allows at most 3e+10
/api/run?scenario=clocks&set=workload.input=%7Bdist%3A|400|--set
/api/run?scenario=clocks&set=noequals|400|expected KEY=VALUE
/api/run?scenario=clocks&set=|400|needs a value
/api/run?scenario=clocks&bogus=1|400|unknown parameter 'bogus'
/api/run|400|needs scenario=NAME
/api/lesson?tab=clocks&prompt=abc|400|prompt: expected a whole number in [16, 32768], got 'abc'
/api/lesson?tab=clocks&prompt=99999999|400|prompt: expected a whole number in [16, 32768]
/api/lesson?tab=clocks&gpu=tpu|400|gpu: expected one of h100-sxm
/api/lesson?tab=users&bogus=1|400|unknown parameter 'bogus' (expected users)
/api/lesson?tab=nope|400|tab: expected one of clocks
/api/lesson?%zz&&==|400|
/api/run?scenario=clocks%00x|400|parameter 'scenario': a NUL byte (%00) in its name or value
/api/run?scenario=clocks&set=workload.rate=1%00|400|parameter 'set': a NUL byte
/api/run?scenario=clocks&set=workload.classes=%5B%7Bname%3A%20a%2C%20share%3A%201%2C%20input%3A%20100%2C%20output%3A%20120000%7D%5D&set=workload.input=&set=workload.output=&set=workload.num_requests=100|400|replies up to 120000 tokens; the lab allows at most 32768
/nope|404|not found
CASES
# 1000 parameters: at libmicrohttpd's default pool size the connection was closed unanswered
many="/api/run?scenario=clocks$(for i in $(seq 1000); do printf '&set=workload.rate=%d' "$i"; done)"
st=$(lab_get "$many" "$tmp/many.json")
if [ "$st" = 400 ] && grep -q 'too many query parameters' "$tmp/many.json"; then
    echo "lab_endpoint: 400 1000 set= parameters -> too many query parameters"
else
    echo "lab_endpoint: FAIL 1000 set= parameters: got $st '$(head -c 200 "$tmp/many.json")'"
    fail=1
fi
st=$(lab_get '/api/lesson?tab=reply&reply=50' "$tmp/after.json")
if [ "$st" = 200 ]; then
    echo "lab_endpoint: after the bad requests the server still answers (200 /api/lesson?tab=reply)"
else
    echo "lab_endpoint: FAIL the server stopped answering after bad requests ($st)"
    fail=1
fi

# 5. SIGTERM: a clean stop, and nothing left behind
pid=$LAB_PID
kill -TERM "$pid"
wait "$pid"
rc=$?
LAB_PID=
if [ $rc -ne 0 ] || kill -0 "$pid" 2>/dev/null; then
    echo "lab_endpoint: FAIL the server did not stop cleanly (status $rc)"
    fail=1
elif [ "$(lab_get / "$tmp/x" 2>/dev/null)" = 200 ]; then
    echo "lab_endpoint: FAIL something still answers on port $LAB_PORT"
    fail=1
else
    echo "lab_endpoint: SIGTERM stopped the server (status 0); port $LAB_PORT closed"
fi
[ $fail -eq 0 ] && echo "lab_endpoint: ok"
exit $fail
