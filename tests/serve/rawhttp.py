"""Raw HTTP clients for the HTTP server tests (tests/serve/hostile.py, tests/lab_load.sh),
127.0.0.1 only.

request(port, method, path, body, headers, host): one HTTP/1.1 request on a fresh
connection (Connection: close): (status, body bytes); status 0 when the server closed
without an answer, -1 when it reset the connection.

slow_clients(port, trickle, silent, first_line, meanwhile, wait_s): open trickle
connections that send first_line and then a header line a second without ever ending the
headers, and silent ones that send nothing; call meanwhile() (a normal request) while they
hold their connections; then watch for up to wait_s seconds which of them the server
closes. Returns (what meanwhile returned, seconds after meanwhile started at which each
connection was closed, None for one still open). Every connection is closed before
returning."""
import socket
import time


def request(port, method, path, body=b"", headers=None, host=None, read_timeout=30.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    h = {"Host": host or "127.0.0.1:%d" % port, "Connection": "close"}
    if body or method == "POST":
        h["Content-Type"] = "application/json"
        h["Content-Length"] = str(len(body))
    h.update(headers or {})
    head = "%s %s HTTP/1.1\r\n%s\r\n" % (method, path, "".join("%s: %s\r\n" % kv for kv in h.items()))
    try:
        s.sendall(head.encode() + body)
    except (BrokenPipeError, ConnectionResetError):
        pass  # answered before the body was read (413): the answer is still there
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except ConnectionResetError:
        s.close()
        return -1, b""
    except socket.timeout:
        pass
    s.close()
    if not data:
        return 0, b""
    status = int(data.split(b" ", 2)[1])
    return status, data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""


def slow_clients(port, trickle, silent, first_line, meanwhile, wait_s):
    conns = []
    for k in range(trickle + silent):
        s = socket.create_connection(("127.0.0.1", port), timeout=wait_s + 10)
        if k < trickle:
            s.sendall(first_line)
        conns.append(s)
    t0 = time.time()
    got = meanwhile()
    closed = [None] * len(conns)
    while None in closed and time.time() - t0 < wait_s:
        for k, s in enumerate(conns):
            if closed[k] is not None:
                continue
            try:
                if k < trickle:
                    s.sendall(b"X-Slow: 1\r\n")
                s.settimeout(0.01)
                if s.recv(1024) == b"":
                    closed[k] = time.time() - t0
            except socket.timeout:
                pass
            except OSError:
                closed[k] = time.time() - t0
        time.sleep(1)
    for s in conns:
        s.close()
    return got, closed
