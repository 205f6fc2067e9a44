# shellcheck shell=bash
# Sourced by tools/run and tools/test: make sure the compiler, CMake and the libraries
# are present (installing the Debian packages when we can), then configure and build.
#   sv_bootstrap            install what is missing, or print the exact apt-get line
#   sv_apt_install PKGS...  apt-get install when root (or password-less sudo); 1 if it cannot
#   sv_build DIR [ARGS...]  configure (Release unless ARGS say otherwise) and build in DIR
#   sv_node_clients         Node.js and npm from Debian when missing, then the pinned test
#                           clients of tests/serve (npm ci, from npm's cache when offline);
#                           never fatal: without them the SDK test prints why and skips

SV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SV_APT_PACKAGES="gcc cmake pkg-config libgsl-dev libyaml-dev libcjson-dev libmicrohttpd-dev check"

sv_missing_packages() {
    local missing=""
    command -v cc >/dev/null 2>&1 || missing="$missing gcc"
    command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
    command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
    if command -v pkg-config >/dev/null 2>&1; then
        pkg-config --exists gsl || missing="$missing libgsl-dev"
        pkg-config --exists yaml-0.1 || missing="$missing libyaml-dev"
        pkg-config --exists libcjson || missing="$missing libcjson-dev"
        pkg-config --exists libmicrohttpd || missing="$missing libmicrohttpd-dev"
        pkg-config --exists check || missing="$missing check"
    else
        missing="$missing libgsl-dev libyaml-dev libcjson-dev libmicrohttpd-dev check"
    fi
    echo "$missing"
}

# Install Debian packages with apt-get when we are root or have password-less sudo:
# 0 when it ran and succeeded, 1 otherwise (the caller says what to do).
sv_apt_install() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; fi
    fi
    command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; } || return 1
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    $sudo apt-get install -y --no-install-recommends "$@" >&2 ||
        { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends "$@" >&2; }
}

sv_bootstrap() {
    local missing
    missing=$(sv_missing_packages)
    [ -z "$missing" ] && return 0
    echo "servesim: installing missing packages:$missing" >&2
    # shellcheck disable=SC2086
    if sv_apt_install $missing; then
        missing=$(sv_missing_packages)
        [ -z "$missing" ] && return 0
    fi
    echo "servesim: cannot install the build dependencies here; run:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    exit 1
}

sv_build() {
    local dir=$1
    shift
    local gen=()
    command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
    if [ ! -f "$dir/CMakeCache.txt" ]; then
        cmake -S "$SV_ROOT" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >&2 || exit 1
    else
        cmake -S "$SV_ROOT" -B "$dir" "$@" >/dev/null || exit 1
    fi
    cmake --build "$dir" -j "$(nproc 2>/dev/null || echo 2)" >&2 || exit 1
}

sv_node_clients() {
    local dir="$SV_ROOT/tests/serve" sudo=""
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        fi
        if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
            echo "servesim: installing nodejs and npm for the serve tests" >&2
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends nodejs npm >&2 ||
                { $sudo apt-get update >&2 &&
                    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends nodejs npm >&2; } ||
                true
        fi
    fi
    command -v npm >/dev/null 2>&1 || return 0
    # up to date already: the lockfile's packages are installed
    if [ -f "$dir/node_modules/.package-lock.json" ] &&
        [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
        return 0
    fi
    (cd "$dir" && timeout 300 npm ci --prefer-offline --no-audit --no-fund >&2) ||
        echo "servesim: npm ci in tests/serve failed (offline?); the SDK test will skip" >&2
}

# clang with its libFuzzer runtime (Debian: clang, libclang-rt-dev; in older releases the
# runtime is in clang's own package), for the fuzz build (tools/fuzz, tools/test).
#   sv_fuzz_bootstrap       0 when `clang -fsanitize=fuzzer` links (installing the packages
#                           with apt-get when it can), else 1
sv_fuzz_ok() {
    command -v clang >/dev/null 2>&1 &&
        echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
        clang -x c -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1
}

sv_fuzz_bootstrap() {
    sv_fuzz_ok && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; fi
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
        echo "servesim: installing clang and libclang-rt-dev for libFuzzer" >&2
        export DEBIAN_FRONTEND=noninteractive
        $sudo apt-get install -y --no-install-recommends clang libclang-rt-dev >&2 ||
            { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends clang libclang-rt-dev >&2; } ||
            $sudo apt-get install -y --no-install-recommends clang >&2 || true
    fi
    sv_fuzz_ok
}

# The fuzz build in DIR: clang, SERVESIM_FUZZ=ON (tests/fuzz/CMakeLists.txt), no unit tests.
sv_fuzz_build() {
    local dir=$1
    shift
    CC=clang sv_build "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSERVESIM_FUZZ=ON \
        -DSERVESIM_TESTS=OFF -DSERVESIM_WERROR=ON "$@"
}
