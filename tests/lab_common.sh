# shellcheck shell=bash
# Sourced by the lab tests (tests/lab_*.sh): start `servesim lab` on a free port in the
# background and stop it for sure, and fetch a URL with curl or, without curl, bash's
# /dev/tcp. Tests that need python3 (to compare JSON; $PY) skip with exit 77 without it.
#   lab_start SERVESIM   sets LAB_PID, LAB_PORT; a trap stops the server on exit, and
#                        it stops by itself after 840 s in any case
#   lab_get PATH OUT     writes the body to OUT and prints the HTTP status

. "$(dirname "${BASH_SOURCE[0]}")/server_common.sh"

lab_need_python() {
    server_need_python lab "the test compares JSON answers with it"
}

lab_stop() {
    [ -n "${LAB_PID:-}" ] || return 0
    kill "$LAB_PID" 2>/dev/null
    wait "$LAB_PID" 2>/dev/null
    LAB_PID=
}

lab_start() {
    LAB_LOG=$(mktemp -d)
    # a bounded run: even a test killed before its trap leaves no server behind
    local bound=()
    command -v timeout >/dev/null 2>&1 && bound=(timeout 840)
    "${bound[@]}" "$1" lab --port 0 >"$LAB_LOG/out" 2>"$LAB_LOG/err" &
    LAB_PID=$!
    trap 'lab_stop; rm -rf "$LAB_LOG"' EXIT
    server_port lab "$LAB_LOG" "$LAB_PID"
    LAB_PORT=$SERVER_PORT
}

lab_get() {
    local path=$1 out=$2
    if command -v curl >/dev/null 2>&1; then
        curl -s -g -o "$out" -w '%{http_code}' --max-time 60 "http://127.0.0.1:$LAB_PORT$path"
        return
    fi
    # HTTP/1.0 over bash's /dev/tcp: the server closes the connection after the answer.
    local raw
    raw=$(mktemp)
    {
        exec 3<>"/dev/tcp/127.0.0.1/$LAB_PORT" || { echo 000; return; }
        printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$path" "$LAB_PORT" >&3
        cat <&3 >"$raw"
        exec 3<&-
    }
    sed '1,/^\r$/d' "$raw" >"$out"
    sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' "$raw"
    rm -f "$raw"
}
