# shellcheck shell=bash
# Sourced by tests/lab_common.sh and tests/serve_common.sh: what starting either server in a
# test needs, written once.
#   server_need_python WHO WHY   sets PY to python3, or prints "WHO: SKIP: ..." and exits 77
#   server_port WHO DIR PID      waits (10 s at most) for the server's "port N" line in
#                                DIR/out and sets SERVER_PORT; exits 1 with its logs if none

server_need_python() {
    # the system's python3 first: version-manager shims can take seconds to start
    PY=
    for p in /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
        [ -n "$p" ] && [ -x "$p" ] && { PY=$p; return 0; }
    done
    echo "$1: SKIP: python3 is not installed ($2)"
    exit 77
}

server_port() {
    local who=$1 dir=$2 pid=$3
    for _ in $(seq 100); do
        grep -q '^port ' "$dir/out" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    SERVER_PORT=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$dir/out")
    if [ -z "$SERVER_PORT" ]; then
        echo "$who: the server did not start:"
        cat "$dir/out" "$dir/err"
        exit 1
    fi
}
