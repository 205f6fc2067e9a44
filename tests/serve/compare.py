"""Client-measured against simulated latencies of `servesim serve` (tests/serve_sdk.sh).

compare.py RESULT.json SPEED BOUNDS LOAD.json...: each request a client streamed is found
in the server's result JSON by its id (the response id cmpl-ID indexes the per-request lists:
ttfts, itls, latencies); the client's TTFT, TPOT and ITLs (wall clock x SPEED) are compared
with the simulation's own, and each token's arrival with when the simulation made it (the
client-side lateness, printed, not bounded). Passes when every request the clients sent is in the result,
completed, with as many tokens as the client got, and |client - simulated| within BOUNDS:
"TTFT_MED,TTFT_P99,ITL_MED,ITL_P99,TPOT_MED,TPOT_P99" in ms (medians and 99th percentiles).
The p99 bounds of TTFT and ITL grow by how late the two processes themselves ran, as the
load's file records them: the client's longest event-loop delay (lagMax) and the server's
emit lateness p99 (paceP99): a request measured while the client or the server was not
scheduled is late by that much, on any server, and one stall of the one client process
delays every stream it holds at once (hundreds of requests, past the worst 1%), so the
client's term is its worst stall, not its 99th percentile. The medians' bounds grow by the
medians of the same two (lagP50, paceP50): on a machine whose other jobs hold its cores,
half the tokens are read that late."""
import json
import sys


def pct(v, p):
    v = sorted(v)
    if not v:
        return 0.0
    k = (len(v) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


res = json.load(open(sys.argv[1]))
speed = float(sys.argv[2])
b = [float(x) for x in sys.argv[3].split(",")]
BOUNDS = {"TTFT": (b[0], b[1]), "ITL": (b[2], b[3]), "TPOT": (b[4], b[5])}
n = len(res["ttfts"])
ok = True
if res["completed"] + res["failed"] != n or res["failed"] != 0:
    print("compare: FAIL the result counts %d completed + %d failed of %d requests"
          % (res["completed"], res["failed"], n))
    ok = False
seen = set()
for path in sys.argv[4:]:
    load = json.load(open(path))
    recs = load["recs"]
    d_ttft, d_tpot, d_itl, late = [], [], [], []
    s_ttft, c_ttft = [], []
    for r in recs:
        i = r["id"]
        if i < 0 or i >= n or i in seen:
            print("compare: FAIL request id %d unknown or seen twice" % i)
            ok = False
            continue
        seen.add(i)
        t = [(x - r["sent"]) / 1000.0 * speed for x in r["tokens"]]
        if len(t) != res["output_lens"][i]:
            print("compare: FAIL request %d: the client got %d tokens, the simulation made %d"
                  % (i, len(t), res["output_lens"][i]))
            ok = False
            continue
        sim_ttft = res["ttfts"][i]
        sim_itl = res["itls"][i]
        sim_e2e = res["latencies"][i]
        d_ttft.append(abs(t[0] - sim_ttft) * 1e3)
        s_ttft.append(sim_ttft * 1e3)
        c_ttft.append(t[0] * 1e3)
        if len(t) > 1:
            c_tpot = (t[-1] - t[0]) / (len(t) - 1)
            s_tpot = (sim_e2e - sim_ttft) / (len(t) - 1)
            d_tpot.append(abs(c_tpot - s_tpot) * 1e3)
            for k in range(1, len(t)):
                d_itl.append(abs((t[k] - t[k - 1]) - sim_itl[k - 1]) * 1e3)
        # each token's arrival (since its request left) minus when the simulation made it
        # (since the request arrived): the client-side lateness, reported, not bounded
        sim_t = sim_ttft
        for k in range(len(t)):
            if k > 0:
                sim_t += sim_itl[k - 1]
            late.append((t[k] - sim_t) * 1e3)
    print("compare: %s: %d streams; TTFT client mean %.3f ms vs simulated %.3f ms; the client "
          "ran late by %.1f ms (p99; max %.1f ms), the server's emit lateness p99 <= %g ms"
          % (path.split("/")[-1], len(recs), sum(c_ttft) / max(1, len(c_ttft)),
             sum(s_ttft) / max(1, len(s_ttft)), load.get("lagP99", 0), load.get("lagMax", 0),
             load.get("paceP99", 0)))
    print("compare:   each token's arrival at the client minus when the simulation made it: "
          "p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d tokens)"
          % (pct(late, 50), pct(late, 99), max(late) if late else 0, len(late)))
    for name, d in (("TTFT", d_ttft), ("TPOT", d_tpot), ("ITL", d_itl)):
        med, p99, mx = pct(d, 50), pct(d, 99), max(d) if d else 0
        bm, bp = BOUNDS[name]
        if name != "TPOT":
            bp += load.get("lagMax", 0) + load.get("paceP99", 0)
            bm += load.get("lagP50", 0) + load.get("paceP50", 0)
        good = p99 <= bp and med <= bm
        print("compare:   |client - simulated| %-4s median %.3f ms, p99 %.3f ms, max %.3f ms "
              "(%d values; bound: median %.1f ms, p99 %.1f ms)%s"
              % (name, med, p99, mx, len(d), bm, bp, "" if good else "  FAIL"))
        ok = ok and good
print("compare: %d requests in the server's result, %d streams compared" % (n, len(seen)))
sys.exit(0 if ok else 1)
