#!/usr/bin/env bash
# `servesim serve` against real clients (docs/serve.md), on 127.0.0.1, bounded in time and
# count, the server always stopped:
#   1. the official OpenAI Node SDK (tests/serve/package-lock.json) streams a chat
#      completion and a completion, and gets a whole one and a 400 (tests/serve/client.mjs);
#   2. closed loops of 64 and 512 concurrent streams through node:http (1024 requests of
#      32 tokens at 512), and of 32 through the SDK's own streams (128 requests):
#      the TTFT, TPOT and ITL each client measures match the simulation's own record of
#      that request (the result JSON's per-request lists) within the bounds of
#      tests/serve/compare.py: |client - simulated| median <= 20 ms and p99 <= 100 ms plus
#      how late client and server themselves ran (the medians of the client's event-loop
#      delay and the server's emit lateness; the client's longest delay and the server's
#      p99) for TTFT and ITL, median <= 5 ms and p99 <= 20 ms for
#      TPOT (the client's timer resolves 1 us; docs/serve.md gives the numbers measured);
#   3. /metrics parsed as Prometheus text every 100 ms during the load: requests held
#      (running + waiting) rise with the load and fall to 0 after it;
#   4. the result JSON counts every request the clients sent into the simulation.
# Skips (exit 77, with a line saying why) without node or the installed SDK.
set -u
servesim=$1
root=$2
. "$root/tests/serve_common.sh"
serve_need_python
if ! command -v node >/dev/null 2>&1; then
    echo "serve_sdk: SKIP: node is not installed (tools/bootstrap.sh installs nodejs and npm as root)"
    exit 77
fi
if [ ! -d "$root/tests/serve/node_modules/openai" ]; then
    echo "serve_sdk: SKIP: the OpenAI SDK is not installed (cd tests/serve && npm ci)"
    exit 77
fi
out=$(mktemp -d)
# The quickstart as the vllm profile runs it: async scheduling and the 12 ms API-server
# path (one more event per request, which makes no token; docs/serve.md gives the pacing
# measured with and without it, the same within the machine's noise).
serve_start "$servesim" "$root/scenarios/quickstart.yaml" --json "$out/result.json"
trap 'serve_stop; rm -rf "$SERVE_DIR" "$out"' EXIT
base="http://127.0.0.1:$SERVE_PORT/v1"
fail=0
timeout 120 node "$root/tests/serve/client.mjs" sdk "$base" || fail=1
timeout 120 node "$root/tests/serve/client.mjs" load "$base" 64 256 32 "$out/l64.json" || fail=1
timeout 120 node "$root/tests/serve/client.mjs" load "$base" 32 128 32 "$out/l32sdk.json" sdk || fail=1
timeout 200 node "$root/tests/serve/client.mjs" load "$base" 512 1024 32 "$out/l512.json" || fail=1
serve_stop
[ "$SERVE_RC" = 0 ] || { echo "serve_sdk: FAIL the server exited $SERVE_RC"; cat "$SERVE_DIR/err"; exit 1; }
[ "$fail" = 0 ] || exit 1
"$PY" "$root/tests/serve/compare.py" "$out/result.json" 1 20,100,20,100,5,20 "$out/l64.json" \
    "$out/l32sdk.json" "$out/l512.json" || fail=1
"$PY" - "$out" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/result.json"))
sent = 3  # the SDK's chat, streamed and whole completions (its 400 never reaches the simulation)
for f, least in (("l64.json", 32), ("l32sdk.json", 16), ("l512.json", 32)):
    l = json.load(open(d + "/" + f))
    sent += l["warm"] + len(l["recs"])
    if l["peakWaiting"] + l["peakRunning"] < least or l["lastWaiting"] != 0 or l["scrapes"] < 5:
        print("serve_sdk: FAIL %s: /metrics: running peaked at %d, waiting at %d, %d held after"
              % (f, l["peakRunning"], l["peakWaiting"], l["lastWaiting"]))
        sys.exit(1)
n = len(r["ttfts"])
print("serve_sdk: the clients sent %d requests into the simulation; its result JSON: %d "
      "(%d completed, %d failed)" % (sent, n, r["completed"], r["failed"]))
sys.exit(0 if n == sent and r["completed"] == n else 1)
PY
[ "$fail" = 0 ] && echo "serve_sdk: ok"
exit "$fail"
