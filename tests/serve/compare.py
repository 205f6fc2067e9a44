"""Client-measured against simulated latencies of `servesim serve` (tests/serve_sdk.sh).

compare.py RESULT.json SPEED BOUNDS LOAD.json...: each request a client streamed is found
in the server's result JSON by its id (the response id cmpl-ID indexes the per-request lists:
ttfts, itls, latencies); the client's TTFT, TPOT and ITLs (wall clock x SPEED) are compared
with the simulation's own, and each token's arrival with when the simulation made it (the
client-side lateness, printed, not bounded). The TTFT is timed from when the request
entered the simulation, as the server's response headers record it on this machine's
monotonic clock (the load's "entered"): the simulation times a request from there, and
the wait before it (the client's write, the kernel, the server reading and parsing the
request while the machine's other jobs hold its cores) is printed, not compared. Without
"entered" (another client) the TTFT is timed from the client's send.

Each token the client read at time a arrived in [a - stall, a], its stall the time since
the client's event loop last ran a 1-ms timer (the load's "stalls"): while it was
descheduled, or busy with other streams' chunks, the token waited in its socket. A
latency is then an interval, and its distance from the simulation's value (0 when inside)
is what is compared; without stalls, the values as read. Passes when every request the
clients sent is in the result, completed, with as many tokens as the client got, and the
distances within BOUNDS: "TTFT_MED,TTFT_P99,ITL_MED,ITL_P99,TPOT_MED,TPOT_P99" in
simulated ms (medians and 99th percentiles), TTFT's and ITL's grown by the server's own
emit lateness (wall-clock ms, SPEED times as much simulated time), which the server records
and no client sees: the median's by its median (paceP50), the p99's by its longest
(paceMax): one stall of the one server process delays every stream it holds at once,
hundreds of requests, more than the worst 1%. The values as read are printed too."""
import json
import sys


def lv(load, key):
    """A figure of the client's load record; 0 where it has none (a null: the server's
    histogram had no observation when it was scraped), which widens no bound."""
    v = load.get(key)
    return float(v) if isinstance(v, (int, float)) else 0.0


def dist(lo, hi, v):
    """How far v lies outside [lo, hi]."""
    return max(0.0, lo - v, v - hi)


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
    d_ttft, d_tpot, d_itl, late, wait_in, wait_read = [], [], [], [], [], []
    r_ttft, r_tpot, r_itl = [], [], []
    s_ttft, c_ttft = [], []
    for r in recs:
        i = r["id"]
        if i < 0 or i >= n or i in seen:
            print("compare: FAIL request id %d unknown or seen twice" % i)
            ok = False
            continue
        seen.add(i)
        t0 = r.get("entered", r["sent"])
        t = [(x - t0) / 1000.0 * speed for x in r["tokens"]]
        if "entered" in r:
            wait_in.append(r["entered"] - r["sent"])
            wait_read.append(r["received"] - r["sent"])
        if len(t) != res["output_lens"][i]:
            print("compare: FAIL request %d: the client got %d tokens, the simulation made %d"
                  % (i, len(t), res["output_lens"][i]))
            ok = False
            continue
        sim_ttft = res["ttfts"][i]
        sim_itl = res["itls"][i]
        sim_e2e = res["latencies"][i]
        # each token read at t[k] arrived in [t[k] - stall, t[k]]: the client's own stall
        # then (the time since its event loop last ran, the load's "stalls"; 0 without)
        st = [x / 1000.0 * speed for x in r.get("stalls", [0] * len(t))]
        d_ttft.append(dist(t[0] - st[0], t[0], sim_ttft) * 1e3)
        r_ttft.append(abs(t[0] - sim_ttft) * 1e3)
        s_ttft.append(sim_ttft * 1e3)
        c_ttft.append(t[0] * 1e3)
        if len(t) > 1:
            m = len(t) - 1
            s_tpot = (sim_e2e - sim_ttft) / m
            d_tpot.append(dist((t[-1] - st[-1] - t[0]) / m, (t[-1] - t[0] + st[0]) / m, s_tpot) * 1e3)
            r_tpot.append(abs((t[-1] - t[0]) / m - s_tpot) * 1e3)
            for k in range(1, len(t)):
                gap = t[k] - t[k - 1]
                d_itl.append(dist(gap - st[k], gap + st[k - 1], sim_itl[k - 1]) * 1e3)
                r_itl.append(abs(gap - sim_itl[k - 1]) * 1e3)
        # each token's arrival (since its request entered) minus when the simulation made
        # it (since the request arrived): the client-side lateness, reported, not bounded
        sim_t = sim_ttft
        for k in range(len(t)):
            if k > 0:
                sim_t += sim_itl[k - 1]
            late.append((t[k] - sim_t) * 1e3)
    print("compare: %s: %d streams; TTFT client mean %.3f ms vs simulated %.3f ms; the client "
          "ran late by %.1f ms (p99; max %.1f ms), the server's emit lateness p99 <= %g ms, max %.1f ms"
          % (path.split("/")[-1], len(recs), sum(c_ttft) / max(1, len(c_ttft)),
             sum(s_ttft) / max(1, len(s_ttft)), lv(load, "lagP99"), lv(load, "lagMax"),
             lv(load, "paceP99"), lv(load, "paceMax")))
    if wait_in:
        print("compare:   the wait before the simulation (not compared): the request's headers "
              "read %.3f ms after the client sent it (median; p99 %.3f ms), it entered the "
              "simulation %.3f ms after (median; p99 %.3f ms, max %.3f ms)"
              % (pct(wait_read, 50), pct(wait_read, 99), pct(wait_in, 50), pct(wait_in, 99),
                 max(wait_in)))
    print("compare:   each token's arrival at the client minus when the simulation made it: "
          "p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d tokens)"
          % (pct(late, 50), pct(late, 99), max(late) if late else 0, len(late)))
    for name, d, raw in (("TTFT", d_ttft, r_ttft), ("TPOT", d_tpot, r_tpot), ("ITL", d_itl, r_itl)):
        med, p99, mx = pct(d, 50), pct(d, 99), max(d) if d else 0
        bm, bp = BOUNDS[name]
        if name != "TPOT":  # the server's own lateness (wall-clock ms, as simulated ms)
            bp += max(0.0, lv(load, "paceMax") or lv(load, "paceP99")) * speed
            bm += max(0.0, lv(load, "paceP50")) * speed
        good = p99 <= bp and med <= bm
        print("compare:   |client - simulated| %-4s median %.3f ms, p99 %.3f ms, max %.3f ms "
              "(as read: %.3f, %.3f, %.3f; %d values; bound: median %.1f ms, p99 %.1f ms)%s"
              % (name, med, p99, mx, pct(raw, 50), pct(raw, 99), max(raw) if raw else 0,
                 len(d), bm, bp, "" if good else "  FAIL"))
        ok = ok and good
print("compare: %d requests in the server's result, %d streams compared" % (n, len(seen)))
sys.exit(0 if ok else 1)
