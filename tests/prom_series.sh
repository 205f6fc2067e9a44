#!/usr/bin/env bash
# The Prometheus exposition over time (run --prometheus-series) read back by the official
# Python client's OpenMetrics parser (prometheus_client.openmetrics.parser, Debian's
# python3-prometheus-client), which checks the format's rules (grouping, timestamps in
# order, cumulative buckets, # EOF). On the ramp scenario the queue depth must rise before
# the TTFT a dashboard reads (the mean TTFT of the requests that got their first token in
# each interval, from the histogram's _sum and _count), and the last success counter must
# equal the run's successful requests. Skips (77) with a line when the package is missing.
set -u
servesim=$1
root=$2
PY=
for p in /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
    [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null &&
        { PY=$p; break; }
done
if [ -z "$PY" ]; then
    echo "prom_series: SKIP: no python3 with prometheus_client (apt-get install python3-prometheus-client)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$servesim" run "$root/scenarios/ramp-queue-leads-ttft.yaml" --prometheus-series "$tmp/ramp.om" \
    --json "$tmp/ramp.json" >/dev/null 2>&1 || { echo "prom_series: FAIL: the run failed"; exit 1; }
"$PY" - "$tmp/ramp.om" "$tmp/ramp.json" <<'PY'
import json, re, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse
text = open(sys.argv[1]).read()
assert text.endswith("# EOF\n")
# Split into families (HELP, TYPE, samples), keeping the file's order.
fams, cur = [], None
for line in text.splitlines():
    if line == "# EOF":
        break
    if line.startswith("# HELP "):
        cur = {"head": [line], "rows": []}
        fams.append(cur)
    elif line.startswith("# TYPE "):
        cur["head"].append(line)
        cur["type"] = line.split()[3]
    else:
        cur["rows"].append(line)
def ts(row):
    return float(row.rsplit(" ", 1)[1])
# 1. Gauges and counters over the whole run, in one parse. (Histograms are parsed per
# scrape below: this parser, 0.16, drops a histogram's buckets after its first timestamp,
# its duplicate check not being reset when the timestamp changes.)
whole = "".join("\n".join(f["head"] + f["rows"]) + "\n" for f in fams if f["type"] != "histogram")
parsed = {f.name: f for f in parse(whole + "# EOF\n")}
want = {"vllm:num_requests_running": "gauge", "vllm:num_requests_waiting": "gauge",
        "vllm:kv_cache_usage_perc": "gauge", "vllm:request_success": "counter",
        "vllm:prompt_tokens": "counter", "vllm:generation_tokens": "counter"}
for name, typ in want.items():
    assert name in parsed and parsed[name].type == typ, (name, sorted(parsed))
waiting = [(float(s.timestamp), s.value) for s in parsed["vllm:num_requests_waiting"].samples]
times = [t for t, _ in waiting]
assert len(times) > 20 and all(b - a == 1.0 for a, b in zip(times, times[1:])), times
# 2. Every scrape (all families at one time, histograms included) as one exposition.
hists = set()
for t in times:
    scrape = "".join("\n".join(f["head"] + [r for r in f["rows"] if ts(r) == t]) + "\n" for f in fams)
    got = {f.name: f for f in parse(scrape + "# EOF\n")}
    for f in got.values():
        if f.type == "histogram":
            hists.add(f.name)
assert hists == {"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds",
                 "vllm:request_time_per_output_token_seconds"}, hists
# 3. Queue depth leads TTFT: the mean TTFT of the requests whose first token came in each
# interval, from the histogram's _sum and _count.
ttft = next(f for f in fams if f["head"][0].split()[2] == "vllm:time_to_first_token_seconds")
val = lambda r: float(r.rsplit(" ", 2)[1])
s = {ts(r): val(r) for r in ttft["rows"] if "_sum{" in r}
c = {ts(r): val(r) for r in ttft["rows"] if "_count{" in r}
mean = [(b, (s[b] - s[a]) / (c[b] - c[a]) if c[b] > c[a] else 0.0) for a, b in zip(times, times[1:])]
t_queue = next(t for t, v in waiting if v >= 10)
t_ttft = next(t for t, v in mean if v > 0.5)
assert t_queue < t_ttft, (t_queue, t_ttft)
# 4. The counters never decrease and end at the run's count.
ok = [x.value for x in parsed["vllm:request_success"].samples]
res = json.load(open(sys.argv[2]))
assert ok == sorted(ok) and ok[-1] == res["completed"], (ok[-1], res["completed"])
print(f"prom_series: ok: {len(parsed)} gauge/counter families over {len(times)} scrapes in one "
      f"parse, {len(times)} scrapes with {len(hists)} histograms each parsed; waiting >= 10 "
      f"at {t_queue:.0f} s, interval mean TTFT over its 0.5 s SLO at {t_ttft:.0f} s; {int(ok[-1])} successes")
PY
