# shellcheck shell=bash
# Sourced by the serve tests (tests/serve_*.sh): start `servesim serve` on a free port of
# 127.0.0.1 in the background and stop it for sure (a trap, and a bound of 280 s on the
# server itself); python3 for the checks ($PY; the tests skip with 77 without it).
#   serve_start SERVESIM SCENARIO ARGS...   sets SERVE_PID, SERVE_PORT, SERVE_DIR (its log)
#   serve_stop                              SIGTERM; the server's exit status in SERVE_RC

. "$(dirname "${BASH_SOURCE[0]}")/server_common.sh"

serve_need_python() {
    server_need_python serve "the checks read JSON with it"
}

serve_stop() {
    SERVE_RC=0
    [ -n "${SERVE_PID:-}" ] || return 0
    kill -TERM "$SERVE_PID" 2>/dev/null
    wait "$SERVE_PID" 2>/dev/null
    SERVE_RC=$?
    SERVE_PID=
}

serve_start() {
    local bin=$1
    shift
    SERVE_DIR=$(mktemp -d)
    local bound=()
    command -v timeout >/dev/null 2>&1 && bound=(timeout 280)
    "${bound[@]}" "$bin" serve "$@" --host 127.0.0.1 --port 0 >"$SERVE_DIR/out" 2>"$SERVE_DIR/err" &
    SERVE_PID=$!
    trap 'serve_stop; rm -rf "$SERVE_DIR"' EXIT
    server_port serve "$SERVE_DIR" "$SERVE_PID"
    SERVE_PORT=$SERVER_PORT
}
