#!/bin/sh
# `make soak`: a night's fleet on this machine, bounded and on loopback only. Starts a fake
# fleet (tests/support/fleet.rs) of SOAK_HOSTS instances (10,000 by default) in processes of
# 5,000 each (each instance holds two open files), then runs the release plugin over the
# first 1,000 and over all of them, as a cron job would (--host-list, --concurrency 32), in
# the summary, json and default formats, and prints wall time, CPU time and peak memory of
# each run. Stops the fleet on exit, whatever ends the script. Not part of `make test`.
#
# Usage: tests/soak.sh TARGET_DIR
set -eu
target=${1:-target}
hosts=${SOAK_HOSTS:-10000}
per_process=5000
plugin="$target/release/check-storage-security"
fleet="$target/release/examples/fake-fleet"
work=$(mktemp -d)
pids=""
stop() {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap stop EXIT INT TERM

first=0
part=0
while [ "$first" -lt "$hosts" ]; do
    size=$((hosts - first))
    [ "$size" -gt "$per_process" ] && size=$per_process
    "$fleet" --first "$first" --size "$size" --host-list "$work/part-$part.txt" &
    pids="$pids $!"
    first=$((first + size))
    part=$((part + 1))
done
# Each process writes its list when every listener is up (written, then renamed).
for i in $(seq 0 $((part - 1))); do
    n=0
    until [ -s "$work/part-$i.txt" ]; do
        n=$((n + 1))
        [ "$n" -gt 600 ] && { echo "soak: the fake fleet did not start" >&2; exit 1; }
        sleep 0.1
    done
done
cat "$work"/part-*.txt > "$work/all.txt"
grep -v '^#' "$work/all.txt" | head -n 1000 > "$work/1000.txt"

echo "A night's fleet: $hosts fake instances on loopback, --concurrency 32, --timeout 2"
printf '%-8s %-10s %6s %10s %10s %10s\n' hosts format exit wall cpu "peak RSS"
for list in 1000 all; do
    count=$(grep -cv '^#' "$work/$list.txt")
    for format in summary json default; do
        set -- --host-list "$work/$list.txt" --concurrency 32 --update-source bundled \
            --timeout 2 --retries 0 --time-budget 3600
        [ "$format" = default ] || set -- "$@" --format "$format"
        code=0
        /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$plugin" "$@" > "$work/out" 2>/dev/null || code=$?
        read -r wall user sys rss < "$work/time"
        cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
        printf '%-8s %-10s %6s %9ss %9ss %7s MiB\n' "$count" "$format" "$code" "$wall" "$cpu" \
            "$((rss / 1024))"
    done
done
