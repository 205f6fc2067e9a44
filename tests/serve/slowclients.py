"""Slow clients for the HTTP server tests (tests/serve/hostile.py, tests/lab_load.sh).

slow_clients(port, trickle, silent, first_line, meanwhile, wait_s): open trickle
connections that send first_line and then a header line a second without ever ending the
headers, and silent ones that send nothing; call meanwhile() (a normal request) while they
hold their connections; then watch for up to wait_s seconds which of them the server
closes. Returns (what meanwhile returned, seconds after meanwhile started at which each
connection was closed, None for one still open). Every connection is closed before
returning. 127.0.0.1 only."""
import socket
import time


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
