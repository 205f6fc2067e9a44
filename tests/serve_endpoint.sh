#!/usr/bin/env bash
# `servesim serve` under hostile clients (docs/serve.md), on a server started here on a
# free port of 127.0.0.1 (at most 256 connections, a 2 s deadline) and stopped at the end:
#   1. malformed JSON, unknown fields, n = 2, a prompt past max_model_len, a 10 MB body, a
#      wrong model, paths outside the routes, a wrong method, a foreign Host: the OpenAI
#      error object with 400, 404, 405, 403 or 413, and the server still serving;
#   2. 2000 connections at once: answered 200 or 503, none lost;
#   3. slow clients closed after the deadline while others are served (tests/serve/hostile.py);
#   4. SIGTERM stops it: exit status 0, and its result JSON counts every request the
#      simulation took (completed + failed = requests), all completed.
set -u
servesim=$1
root=$2
. "$root/tests/serve_common.sh"
serve_need_python
out=$(mktemp -d)
serve_start "$servesim" "$root/scenarios/quickstart.yaml" --max-connections 256 --timeout 2 \
    --json "$out/result.json"
trap 'serve_stop; rm -rf "$SERVE_DIR" "$out"' EXIT
fail=0
timeout 200 "$PY" "$root/tests/serve/hostile.py" "$SERVE_PORT" 256 2 "$root/docs/errors.md" || fail=1
serve_stop
[ "$SERVE_RC" = 0 ] || { echo "serve_endpoint: FAIL the server exited $SERVE_RC"; cat "$SERVE_DIR/err"; fail=1; }
"$PY" - "$out/result.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
n = len(r["ttfts"])
ab = sum(1 for e in r["errors"] if e == "aborted")
print("serve_endpoint: the result JSON: %d requests, %d completed, %d failed (%d aborted: the "
      "client that read nothing)" % (n, r["completed"], r["failed"], ab))
if r["completed"] + r["failed"] != n or r["failed"] != 1 or ab != 1 or n < 1000:
    print("serve_endpoint: FAIL the result does not add up")
    sys.exit(1)
PY
[ "$fail" = 0 ] && echo "serve_endpoint: ok"
exit "$fail"
