#!/usr/bin/env bash
# `servesim serve` against what its simulation does (docs/serve.md), on a server started
# here on a free port of 127.0.0.1 and stopped at the end, each check bounded in time
# (tests/serve/live.py):
#   1. abort: a client that closes its stream after 2 chunks, and one that closes a whole
#      request right after sending it, abort their requests in the simulation:
#      /metrics shows servesim:requests_aborted_total 2, nothing running, the KV cache
#      empty; the result JSON lists both as failed with the error "aborted" (vLLM's
#      FINISHED_ABORTED) and completed + failed = requests;
#   2. prefix: a repeated prompt (token ids, text, chat) hits the prefix cache the second
#      time (vllm:prefix_cache_hits_total: its full blocks but never its last token) and
#      starts sooner (its TTFT in the result JSON); a prompt sharing a prefix hits that
#      prefix's full blocks.
set -u
servesim=$1
root=$2
. "$root/tests/serve_common.sh"
serve_need_python
out=$(mktemp -d)
serve_start "$servesim" "$root/scenarios/quickstart.yaml" --json "$out/result.json"
trap 'serve_stop; rm -rf "$SERVE_DIR" "$out"' EXIT
fail=0
timeout 100 "$PY" "$root/tests/serve/live.py" abort "$SERVE_PORT" | tee "$out/abort.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
timeout 100 "$PY" "$root/tests/serve/live.py" prefix "$SERVE_PORT" | tee "$out/prefix.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
serve_stop
[ "$SERVE_RC" = 0 ] || { echo "serve_live: FAIL the server exited $SERVE_RC"; cat "$SERVE_DIR/err"; fail=1; }
ids=$(awk '/^abort-ids/{print $2, $3}' "$out/abort.txt")
pairs=$(awk '/^prefix-pair/{printf "%s,%s ", $2, $3}' "$out/prefix.txt")
"$PY" - "$out/result.json" "$pairs" $ids <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
for pair in sys.argv[2].split():
    a, b = (int(x) for x in pair.split(","))
    print("serve_live: simulated TTFT of %d: %.3f ms; of %d, its prompt cached: %.3f ms"
          % (a, r["ttfts"][a] * 1e3, b, r["ttfts"][b] * 1e3))
    if not r["ttfts"][b] < r["ttfts"][a]:
        print("serve_live: FAIL the cached prompt did not start sooner")
        sys.exit(1)
ids = [int(a) for a in sys.argv[3:]]
n, errors = len(r["ttfts"]), r["errors"]
aborted = [i for i, e in enumerate(errors) if e == "aborted"]
print("serve_live: the result JSON: %d requests, %d completed, %d failed; aborted: %s"
      % (n, r["completed"], r["failed"], aborted))
if r["completed"] + r["failed"] != n or aborted != ids or r["failed"] != len(ids):
    print("serve_live: FAIL expected requests %s aborted, and nothing else failed" % ids)
    sys.exit(1)
PY
[ "$fail" = 0 ] && echo "serve_live: ok"
exit "$fail"
