#!/bin/sh
# `make test-neighbour`: the whole suite on a machine where an OpenCloud runs, as on the
# machines of the people who work on this tool. No test may scan it: a test scans only what
# it started, so nothing another process serves can change what a test asserts.
#
# The neighbour is the fake instance (make demo's example) answering like OpenCloud 4.0.0:
# the proxy on 9200 and a debug listener (/healthz, /metrics, /config) on each default debug
# port of the product (src/family/opencloud.rs), on every IPv4 address (0.0.0.0, so on all
# of 127.0.0.0/8) and on [::1]; as root, also a reverse proxy's 443 (HTTPS) and 80 (HTTP).
# When the suite has run, each listener's count of connections must be 0.
#
# Usage: sh tests/beside-opencloud.sh TARGET_DIR CARGO
set -u

target=${1:-target}
cargo=${2:-cargo}
example=$target/debug/examples/fake-instance
dir=$target/neighbour
debug_ports="9205 9141 9124 9134 9239"

fail() {
    echo "beside-opencloud.sh: $*" >&2
    exit 1
}

[ -x "$example" ] || fail "$example is missing: run \`cargo build --examples\`"
rm -rf "$dir"
mkdir -p "$dir" || fail "cannot create $dir"

pids=""
names=""
stop() {
    for pid in $pids; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in $pids; do
        wait "$pid" 2>/dev/null
    done
    pids=""
}
trap stop EXIT
trap 'exit 1' INT TERM HUP

# start NAME ARGS...: one neighbour, its log, CA, ready and traffic files under $dir.
start() {
    name=$1
    shift
    "$example" --ready-file "$dir/$name.ready" --traffic-file "$dir/$name.traffic" \
        --ca-out "$dir/$name.ca.pem" "$@" 2>"$dir/$name.log" &
    pids="$pids $!"
    names="$names $name"
}

debug_args=""
for port in $debug_ports; do
    debug_args="$debug_args --debug-port $port"
done
# shellcheck disable=SC2086 # the debug ports are split on purpose
start opencloud --bind 0.0.0.0 --port 9200 $debug_args
# shellcheck disable=SC2086
start opencloud-ipv6 --bind ::1 --port 9200 $debug_args
if [ "$(id -u)" -eq 0 ]; then
    start proxy-https --bind 0.0.0.0 --port 443
    start proxy-http --bind 0.0.0.0 --port 80 --plain
fi

for name in $names; do
    tries=0
    until [ -s "$dir/$name.ready" ]; do
        tries=$((tries + 1))
        [ "$tries" -le 100 ] || fail "the neighbour $name did not start: $(cat "$dir/$name.log")"
        sleep 0.1
    done
    echo "beside-opencloud.sh: $(cat "$dir/$name.log")" >&2
done

# As `make test`: the package tests last and alone; both parts run.
$cargo nextest run --no-fail-fast -E 'not test(/^deb_package::/)'
rest=$?
$cargo nextest run --no-fail-fast -E 'test(/^deb_package::/)'
package=$?

stop
touched=""
for name in $names; do
    [ -s "$dir/$name.traffic" ] || fail "the neighbour $name wrote no traffic report"
    if grep -qv ' connections=0 ' "$dir/$name.traffic"; then
        touched="$touched $name"
        sed "s/^/beside-opencloud.sh: $name: /" "$dir/$name.traffic" >&2
    fi
done
[ -z "$touched" ] || fail "the tests reached the machine's own OpenCloud:$touched"
if [ "$rest" -ne 0 ] || [ "$package" -ne 0 ]; then
    fail "tests failed beside an OpenCloud"
fi
echo "beside-opencloud.sh: every test passed, and none reached the neighbour" >&2
