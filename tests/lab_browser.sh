#!/usr/bin/env bash
# The lab page in a real browser: headless Chromium loads the page from a server started
# here, with the slider state in the address (#tab=clocks&prompt=4096), runs its script
# (which asks /api/lesson), and the test reads the numbers the page rendered from the DOM
# (data-value of each number) and checks every one against the endpoint's own answer for
# the same slider state. Skips (77) without Chromium or python3.
set -u
servesim=$1
root=$2
. "$root/tests/lab_common.sh"
browser=
for b in chromium chromium-browser google-chrome; do
    command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -z "$browser" ]; then
    echo "lab_browser: SKIP: no chromium on this machine (apt-get install chromium)"
    exit 77
fi
lab_need_python
tmp=$(mktemp -d)
lab_start "$servesim"
trap 'lab_stop; rm -rf "$LAB_LOG" "$tmp"' EXIT
fail=0
for state in "tab=clocks&prompt=4096" "tab=users&users=64" "tab=tail&slow=5&k=10" "tab=queue&gpu=a100-80gb"; do
    "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile" \
        --virtual-time-budget=20000 --dump-dom "http://127.0.0.1:$LAB_PORT/#$state" \
        >"$tmp/dom.html" 2>"$tmp/browser.err"
    st=$(lab_get "/api/lesson?$state" "$tmp/api.json")
    if [ "$st" != 200 ]; then
        echo "lab_browser: FAIL /api/lesson?$state answered $st"
        fail=1
        continue
    fi
    "$PY" - "$tmp/dom.html" "$tmp/api.json" "$state" <<'PY' || fail=1
import json, re, sys
dom = open(sys.argv[1]).read()
api = json.load(open(sys.argv[2]))
state = sys.argv[3]
if 'data-state="ready"' not in dom:
    m = re.search(r'id="error"[^>]*>([^<]*)<', dom)
    print("lab_browser: FAIL %s: the page did not finish (%s)" % (state, m.group(1) if m else "no answer"))
    sys.exit(1)
tab = re.search(r'data-tab="([^"]*)"', dom).group(1)
shown = dict(re.findall(r'data-key="([^"]+)" data-value="([^"]*)"', dom))
if tab != api["tab"] or not shown:
    print("lab_browser: FAIL %s: the page shows tab %s with %d numbers" % (state, tab, len(shown)))
    sys.exit(1)
bad = 0
for k, v in shown.items():
    want = api["numbers"].get(k)
    got = None if v == "null" else (v if isinstance(want, str) else float(v))
    ok = got == want
    bad += not ok
    print("lab_browser: %-28s %-24s page %-22s endpoint %-22s %s"
          % (state, k, v, want, "ok" if ok else "DIFFERENT"))
charts = len(re.findall(r"<figure[^>]*data-chart=", dom))
if charts != len(api["charts"]):
    print("lab_browser: FAIL %s: %d charts on the page, %d from the endpoint" % (state, charts, len(api["charts"])))
    bad += 1
print("lab_browser: %s: %d numbers and %d charts rendered by Chromium match the endpoint" % (state, len(shown), charts)
      if not bad else "lab_browser: FAIL %s" % state)
sys.exit(1 if bad else 0)
PY
done
[ $fail -eq 0 ] && echo "lab_browser: ok"
exit $fail
