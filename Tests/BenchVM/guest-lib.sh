# Sourced by the group scripts in groups/, which run inside the bench VM (Tests/BenchVM/run).
# Each check prints "ok - NAME" or "not ok - NAME" with what was seen; `finish` exits 1 if any
# check failed. Every wait has a deadline.
set -u

repo="$(cd "$(dirname "$0")/../../.." && pwd)"
HWPROBE="${HWPROBE:-$repo/.build/debug/hwprobe}"
PY=/usr/bin/python3            # Debian's: has socket.AF_BLUETOOTH, starts fast under TCG
PEER_PY="$repo/.venv-peers/bin/python"
work="$(mktemp -d /tmp/group.XXXXXX)"
failures=0
checks=0

[ "${BENCH_VM:-0}" = 1 ] || { echo "not ok - this script runs inside the bench VM: Tests/BenchVM/run -- $0" >&2; exit 2; }

pass() { checks=$((checks + 1)); echo "ok - $1"; }
fail() {
    checks=$((checks + 1)); failures=$((failures + 1))
    echo "not ok - $1"
    shift
    for detail in "$@"; do printf '%s\n' "$detail" | sed 's/^/    /'; done
}
# check NAME COMMAND...: passes when COMMAND succeeds
check() { local name="$1"; shift; if "$@"; then pass "$name"; else fail "$name" "failed: $*"; fi; }

# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds; 1 when the deadline passes
wait_until() {
    local deadline=$(( $(date +%s) + $1 )); shift
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

# json FILE PYTHON-EXPRESSION: prints the expression evaluated on the parsed JSON as `j`
json() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(json.dumps(v) if not isinstance(v,str) else v)' "$1" "$2" 2>&1; }

# elapsed NAME START: prints the time since START (date +%s.%N) on stderr
elapsed() { awk -v n="$1" -v a="$2" -v b="$(date +%s.%N)" 'BEGIN { printf "# %s: %.1f s\n", n, b - a }' >&2; }

# emit_cassette NAME FILE...: hands a cassette (and its frames) back to the host on stdout, gzipped
# tar in base64 between `begin-cassette NAME` and `end-cassette NAME` lines: the guest's root is the
# host's, read-only, so stdout is the way out. scripts/test-vm unpacks it into
# .build/bench-vm/cassettes/GROUP/ and replays it on the host (Tests/BenchVM/replay-cassettes.sh).
emit_cassette() {
    local name="$1"; shift
    echo "begin-cassette $name"
    (cd "$(dirname "$1")" && for f in "$@"; do basename "$f"; done | tar -cf - -T - | gzip -1 | base64 -w 76)
    echo "end-cassette $name"
}

finish() {
    echo "# $checks checks, $failures failed"
    [ "$failures" -eq 0 ]
    exit $?
}
