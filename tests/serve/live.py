"""Checks of `servesim serve` against what its simulation does (tests/serve_live.sh), on
127.0.0.1, each bounded in time:

abort PORT: a client that disconnects mid-stream aborts its request in the simulation, as
  vLLM aborts a request whose client left. A streamed completion (1,000 prompt tokens,
  1,000 reply tokens) is read for 2 chunks, then its socket closed; a whole (not streamed)
  one is closed right after it is sent. /metrics then shows both aborted
  (servesim:requests_aborted_total 2), nothing running and the KV cache empty again
  (vllm:kv_cache_usage_perc 0, above 0 while the stream ran). Prints the ids aborted.

prefix PORT: a prompt sent twice, the second after the first ended, is found in the prefix
  cache the second time: vllm:prefix_cache_hits_total grows by the prompt's full blocks but
  never its last token (floor((tokens - 1) / 16) * 16 with vLLM's block of 16; the token-id
  prompt of 2,000 tokens: 1,984); so for a text prompt and a chat whose messages repeat.
  Prints each pair's ids ("prefix-pair FIRST SECOND") and TTFTs as the client measured
  them; tests/serve_live.sh checks in the result JSON that the second's is shorter. A prompt sharing only
  its first 1,000 tokens with an earlier one hits 992 of them (62 blocks)."""
import json
import socket
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rawhttp import request  # noqa: E402


def metrics(port):
    status, body = request(port, "GET", "/metrics")
    assert status == 200, status
    m = {}
    for line in body.decode().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        key = name.split("{", 1)[0]
        m[key] = m.get(key, 0.0) + float(value)
    return m


def open_post(port, path, body):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    data = json.dumps(body).encode()
    s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % (path, port, len(data))).encode() + data)
    return s


class Events:
    """The server-sent events of one response on socket s, read as they come."""

    def __init__(self, s):
        self.s, self.buf, self.done = s, b"", False

    def read(self, n):
        """The next n events (fewer at the stream's [DONE]), the JSON of each."""
        events = []
        while len(events) < n and not self.done:
            while b"\n\n" in self.buf and len(events) < n:
                ev, self.buf = self.buf.split(b"\n\n", 1)
                i = ev.find(b"data: ")
                if i >= 0 and ev[i + 6:] == b"[DONE]":
                    self.done = True
                    return events
                if i >= 0:
                    events.append(json.loads(ev[i + 6:]))
            if len(events) < n:
                d = self.s.recv(65536)
                if not d:
                    self.done = True
                self.buf += d
        return events


def wait_for(port, cond, what, bound=15.0):
    t0 = time.time()
    while time.time() - t0 < bound:
        m = metrics(port)
        if cond(m):
            return m
        time.sleep(0.05)
    print("serve_live: FAIL %s within %g s; /metrics: %s" % (what, bound, json.dumps(
        {k: v for k, v in m.items() if k.startswith(("vllm:num", "vllm:kv", "servesim:req"))})))
    sys.exit(1)


def abort(port):
    prompt = "abcd" * 1000  # 1,000 tokens by servesim's rule
    s = open_post(port, "/v1/completions", {"prompt": prompt, "max_tokens": 1000,
                                            "ignore_eos": True, "stream": True})
    t0 = time.time()
    ev = Events(s).read(2)
    assert len(ev) == 2, ev
    rid = int(ev[0]["id"].split("-")[1])
    m = metrics(port)
    print("serve_live: stream %s: 2 chunks in %.3f s; running %d, KV usage %.6f; closing it"
          % (ev[0]["id"], time.time() - t0, m["vllm:num_requests_running"],
             m["vllm:kv_cache_usage_perc"]))
    if m["vllm:num_requests_running"] != 1 or not m["vllm:kv_cache_usage_perc"] > 0:
        print("serve_live: FAIL the stream is not running in the simulation")
        sys.exit(1)
    s.close()
    m = wait_for(port, lambda m: m["servesim:requests_aborted_total"] == 1
                 and m["vllm:num_requests_running"] == 0 and m["vllm:kv_cache_usage_perc"] == 0,
                 "the closed stream aborted and its KV freed")
    print("serve_live: after the close: servesim:requests_aborted_total %d, running %d, "
          "waiting %d, KV usage %g" % (m["servesim:requests_aborted_total"],
                                       m["vllm:num_requests_running"],
                                       m["vllm:num_requests_waiting"],
                                       m["vllm:kv_cache_usage_perc"]))
    # a whole answer waited for, its client gone the moment it was sent
    s = open_post(port, "/v1/chat/completions", {"messages": [{"role": "user", "content": prompt}],
                                                 "max_tokens": 1000, "ignore_eos": True})
    time.sleep(0.05)
    s.close()
    m = wait_for(port, lambda m: m["servesim:requests_aborted_total"] == 2
                 and m["vllm:num_requests_running"] + m["vllm:num_requests_waiting"] == 0
                 and m["vllm:kv_cache_usage_perc"] == 0,
                 "the whole request aborted")
    print("serve_live: a whole request closed after sending: servesim:requests_aborted_total "
          "%d, running %d, KV usage %g" % (m["servesim:requests_aborted_total"],
                                         m["vllm:num_requests_running"],
                                         m["vllm:kv_cache_usage_perc"]))
    status, body = request(port, "POST", "/v1/completions",
                           json.dumps({"prompt": "hi", "max_tokens": 3}).encode())
    assert status == 200, (status, body)
    print("serve_live: still serving: 200, %s" % json.loads(body)["choices"][0]["text"].strip())
    print("abort-ids %d %d" % (rid, int(json.loads(body)["id"].split("-")[1]) - 1))


def ttft_of(port, path, body):
    """(TTFT in s from the request's last byte to its first token's chunk, request id,
    prompt tokens as the usage counts them)."""
    body = dict(body, stream=True, stream_options={"include_usage": True})
    s = open_post(port, path, body)
    t0 = time.perf_counter()
    r = Events(s)
    ev = r.read(1 + (path == "/v1/chat/completions"))  # chat: the role chunk first
    t = time.perf_counter() - t0
    ev += r.read(10**6)  # to its end
    s.close()
    return t, ev[0]["id"], ev[-1]["usage"]["prompt_tokens"]


def prefix(port):
    cases = [
        # 2,000 token ids
        ("token ids", "/v1/completions", {"prompt": list(range(7, 2007)), "max_tokens": 4}),
        # 8,111 bytes: 2,028 tokens
        ("text", "/v1/completions", {"prompt": "Summarise: " + "lorem ipsum dolor sit amet " * 300,
                                     "max_tokens": 4}),
        # (4 + 750) + (4 + 200) = 958 tokens
        ("chat", "/v1/chat/completions",
         {"messages": [{"role": "system", "content": "You are terse. " * 200},
                       {"role": "user", "content": "Say hi. " * 100}], "max_tokens": 4}),
    ]
    for name, path, body in cases:
        h0 = metrics(port)["vllm:prefix_cache_hits_total"]
        t1, id1, n = ttft_of(port, path, body)
        h1 = metrics(port)["vllm:prefix_cache_hits_total"]
        t2, id2, _ = ttft_of(port, path, body)
        h2 = metrics(port)["vllm:prefix_cache_hits_total"]
        expect = (n - 1) // 16 * 16
        print("serve_live: %-9s %s (%d tokens): TTFT %.2f ms, %d tokens hit; again %s: TTFT "
              "%.2f ms, %d tokens hit (expected %d)"
              % (name, id1, n, t1 * 1e3, h1 - h0, id2, t2 * 1e3, h2 - h1, expect))
        if h1 != h0 or h2 - h1 != expect:
            print("serve_live: FAIL %s: the repeated prompt should hit the cache (%d tokens)"
                  % (name, expect))
            sys.exit(1)
        # its simulated TTFT is checked in the result JSON (the client's is printed only)
        print("prefix-pair %s %s" % (id1.split("-")[1], id2.split("-")[1]))
    # sharing only a prefix: the first 1,000 token ids of an earlier prompt, then others
    h0 = metrics(port)["vllm:prefix_cache_hits_total"]
    ttft_of(port, "/v1/completions", {"prompt": list(range(7, 1007)) + [1] * 500, "max_tokens": 2})
    h1 = metrics(port)["vllm:prefix_cache_hits_total"]
    print("serve_live: a prompt sharing its first 1000 token ids: %d tokens hit" % (h1 - h0))
    if h1 - h0 != 992:
        print("serve_live: FAIL expected 992 (62 blocks of 16)")
        sys.exit(1)


if __name__ == "__main__":
    {"abort": abort, "prefix": prefix}[sys.argv[1]](int(sys.argv[2]))
