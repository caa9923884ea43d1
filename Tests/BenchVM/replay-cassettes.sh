#!/usr/bin/env bash
# Replays on the host the cassettes a bench VM group recorded (Tests/BenchVM/groups: `emit_cassette`),
# which scripts/test-vm has unpacked into DIR: the VM's hardware is gone, the cassette stands in.
#
#   Tests/BenchVM/replay-cassettes.sh GROUP DIR FIXTURES
#
# Prints ok / not ok lines like a group, and the size of each cassette and the replay's wall time;
# exits 1 when a replay did not give the recorded result.
set -u
group="$1" dir="$2" fixtures="$3"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
HWPROBE="${HWPROBE:-$repo/.build/debug/hwprobe}"
failures=0
ok() { echo "ok - $1"; }
notok() { failures=$((failures + 1)); echo "not ok - $1"; shift; for d in "$@"; do printf '%s\n' "$d" | sed 's/^/    /'; done; }
seconds() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

case "$group" in
v4l2)
    c="$dir/v4l2-vivid/vivid.cassette"
    [ -s "$c" ] || { notok "the v4l2 group's cassette came back ($c)"; exit 1; }
    out="$(mktemp -d)"
    started=$(date +%s.%N)
    HWPROBE_SIM_SPEED=1 "$HWPROBE" import --camera "replay:$c" --password-file "$fixtures/password" --out "$out/vault.json" --json \
        >"$out/replay.json" 2>"$out/replay.err"
    rc=$?
    took=$(seconds "$started")
    want="$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["backupId"], j["codes"], j["bytes"])' "$dir/v4l2-vivid/vivid.json" 2>&1)"
    got="$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["backupId"], j["codes"], j["bytes"])' "$out/replay.json" 2>&1)"
    if [ $rc -eq 0 ] && [ "$want" = "$got" ] && cmp -s "$out/vault.json" "$fixtures/plaintext"; then
        ok "import --camera replay: of vivid's cassette ($(wc -c < "$c") + $(wc -c < "$c.y4m") bytes, $(grep -c '^frame ' "$c") frames): the same result ($got) in $took s"
    else
        notok "import --camera replay: of vivid's cassette" "exit $rc; recorded: $want; replayed: $got" "$(tail -n 5 "$out/replay.err")"
    fi
    rm -rf "$out"
    ;;
evdev)
    c="$dir/evdev-pad/pad.cassette"
    [ -s "$c" ] || { notok "the evdev group's cassette came back ($c)"; exit 1; }
    started=$(date +%s.%N)
    "$HWPROBE" haptics --device "replay:$c" --cue success >/dev/null 2>"$dir/replay.err"
    rc=$?
    took=$(seconds "$started")
    # The VM runs under TCG, where a command can come 10-15 ms late: the host must see the same
    # commands in the same order; offsets more than 5 ms off are shown, and are all that may differ.
    if [ $rc -eq 0 ]; then ok "haptics --device replay: of the uinput pad's cassette ($(wc -c < "$c") bytes): the same commands at the same offsets, in $took s"
    elif [ $rc -eq 1 ] && ! grep "command [0-9]" "$dir/replay.err" | grep -qv "ms off, more than 5 ms"; then
        ok "haptics --device replay: of the uinput pad's cassette ($(wc -c < "$c") bytes): the same commands in order, in $took s; late in the VM:"
        grep "ms off" "$dir/replay.err" | sed 's/^ */    # /'
    else notok "haptics --device replay: of the uinput pad's cassette" "exit $rc" "$(cat "$dir/replay.err")" "$(cat "$c")"; fi
    "$HWPROBE" haptics --device "replay:$c" --cue error >/dev/null 2>"$dir/other.err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "expected success, saw error" "$dir/other.err"; then ok "another cue against it exits 1: $(grep -m1 'cue 1' "$dir/other.err" | sed 's/^ *//')"
    else notok "another cue against the pad's cassette exits 1" "exit $rc" "$(cat "$dir/other.err")"; fi
    ;;
*)
    exit 0
    ;;
esac
[ "$failures" -eq 0 ]
