#!/bin/sh
# evdev force feedback against the real kernel: uinput_pad.py makes a pad with FF_RUMBLE and FF_GAIN
# through /dev/uinput and logs every upload, play, gain and erase the kernel forwards to it.
# `hwprobe list` must show its evdev node claimed by evdev-rumble, and `hwprobe haptics` must make
# the kernel tell the pad exactly what the pattern table says for every cue (expectations written
# on the host by `bench-vm-fixtures haptics`, from HAL's table).
# Runs inside the bench VM with modules evdev and uinput: scripts/test-vm evdev.
. "$(dirname "$0")/../guest-lib.sh"

FIXTURES="${FIXTURES:-$repo/.build/bench-vm/fixtures}"
expect="$FIXTURES/haptics"
[ -s "$expect/cues" ] || { fail "haptic expectations in $expect (made by bench-vm-fixtures haptics)"; finish; }

started=$(date +%s.%N)
"$PY" "$repo/Tests/BenchVM/uinput_pad.py" "$work/pad.jsonl" >"$work/pad.out" 2>"$work/pad.err" &
pad=$!
ready() { grep -q "^READY" "$work/pad.out" || ! kill -0 "$pad" 2>/dev/null; }
wait_until 20 ready
elapsed "uinput pad ready" "$started"
node="$(sed -n 's/^READY //p' "$work/pad.out")"
if [ -z "$node" ] || [ ! -c "$node" ]; then
    fail "uinput pad with FF_RUMBLE has an evdev node" "$(cat "$work/pad.out" "$work/pad.err")"
    finish
fi
pass "uinput pad with FF_RUMBLE + FF_GAIN is $node"

# 1. list: the pad, claimed by the generic force-feedback driver.
"$HWPROBE" list --json >"$work/list.json" 2>"$work/list.err"
rc=$?
seen="$(json "$work/list.json" "[(d['uri'], d['driver']) for d in j['hapticDevices'] if d['uri'].startswith('evdev:')]")"
if [ $rc -eq 0 ] && [ "$seen" = "[[\"evdev:$node\", \"evdev-rumble\"]]" ]; then
    pass "hwprobe list: evdev:$node, driver evdev-rumble"
else
    fail "hwprobe list: evdev:$node, driver evdev-rumble" "exit $rc; evdev haptic devices: $seen" "$(cat "$work/list.err")"
fi

# 2. Every cue, one hwprobe run each: what reached the pad through the kernel, against the table.
# The log is complete when hwprobe returns: the erase (the last entry) waits for the pad's answer.
compare() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
got = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
want = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
if got != want:
    print("got:"); [print("  " + json.dumps(e)) for e in got]
    print("expected:"); [print("  " + json.dumps(e)) for e in want]
    sys.exit(1)
print(f"{len(got)} commands")
EOF
}
started=$(date +%s.%N)
for cue in $(cat "$expect/cues"); do
    : > "$work/pad.jsonl"
    timeout 30 "$HWPROBE" haptics --device "evdev:$node" --cue "$cue" >"$work/cue.out" 2>"$work/cue.err"
    rc=$?
    if [ $rc -eq 0 ] && verdict="$(compare "$work/pad.jsonl" "$expect/evdev-$cue.jsonl")"; then
        pass "haptics --cue $cue: the pad got the table's $verdict (gain, uploads, plays, erase)"
    else
        fail "haptics --cue $cue: the pad gets exactly the table's commands" "exit $rc" "${verdict:-}" "$(cat "$work/cue.err")"
    fi
    verdict=""
done
elapsed "$(wc -l < "$expect/cues") cues" "$started"

# 3. Not ours to open (an unprivileged user: the node is root's).
NO_PERM="hwprobe haptics: no permission to use evdev:$node: install the udev rule from the README or run with sudo"
: > "$work/pad.jsonl"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    timeout 30 "$HWPROBE" haptics --device "evdev:$node" --cue selection >"$work/perm.out" 2>"$work/perm.err"
rc=$?
if [ $rc -eq 3 ] && [ "$(cat "$work/perm.err")" = "$NO_PERM" ] && [ ! -s "$work/pad.jsonl" ]; then
    pass "as nobody: exit 3, \"${NO_PERM#hwprobe haptics: }\", nothing reached the pad"
else
    fail "as nobody: exit 3, \"${NO_PERM#hwprobe haptics: }\"" "exit $rc" "$(cat "$work/perm.out" "$work/perm.err" "$work/pad.jsonl")"
fi

# 4. The pad goes away mid-cue (a second pad destroys itself right after the second play of
#    `error`, as an unplug would): reported once (exit 3, "disappeared"), nothing after it, no hang.
kill "$pad"
wait "$pad" 2>/dev/null
: > "$work/gone.jsonl"
"$PY" "$repo/Tests/BenchVM/uinput_pad.py" "$work/gone.jsonl" --vanish-after-plays 2 >"$work/pad2.out" 2>"$work/pad2.err" &
pad=$!
ready() { grep -q "^READY" "$work/pad2.out" || ! kill -0 "$pad" 2>/dev/null; }
wait_until 20 ready
node="$(sed -n 's/^READY //p' "$work/pad2.out")"
if [ -n "$node" ]; then
    started=$(date +%s.%N)
    timeout 30 "$HWPROBE" haptics --device "evdev:$node" --cue error >"$work/gone.out" 2>"$work/gone.err"
    rc=$?
    elapsed "haptics --cue error with the pad vanishing" "$started"
    plays="$(grep -c '"count": 1' "$work/gone.jsonl")"
    if [ $rc -eq 3 ] && [ "$(cat "$work/gone.err")" = "hwprobe haptics: haptic device evdev:$node disappeared: carrying on without haptics" ] \
        && [ "$plays" -eq 2 ] && ! grep -q '"erase"' "$work/gone.jsonl"; then
        pass "the pad destroyed mid-cue: exit 3, once: $(cat "$work/gone.err")"
    else
        fail "the pad destroyed mid-cue: exit 3, \"haptic device evdev:$node disappeared…\"" "exit $rc (124: hung); $plays plays" \
            "$(cat "$work/gone.out" "$work/gone.err")" "$(cat "$work/gone.jsonl")"
    fi
else
    fail "a second uinput pad (--vanish-after-plays 2)" "$(cat "$work/pad2.out" "$work/pad2.err")"
fi
kill "$pad" 2>/dev/null
wait "$pad" 2>/dev/null

# 5. A cassette of the pad (issue 17): `haptics --record` keeps its identity and every timed command
#    of the cue; it goes back to the host, which replays it (`--device replay:`) and must find the
#    same commands at the same offsets.
: > "$work/rec.jsonl"
"$PY" "$repo/Tests/BenchVM/uinput_pad.py" "$work/rec.jsonl" >"$work/pad3.out" 2>"$work/pad3.err" &
pad=$!
ready() { grep -q "^READY" "$work/pad3.out" || ! kill -0 "$pad" 2>/dev/null; }
wait_until 20 ready
node="$(sed -n 's/^READY //p' "$work/pad3.out")"
if [ -n "$node" ] && timeout 30 "$HWPROBE" haptics --device "evdev:$node" --cue success --record "$work/pad.cassette" \
        >"$work/rec.out" 2>"$work/rec.err" && grep -q "^device pad evdev:$node$" "$work/pad.cassette" \
        && grep -q "^identity evdev-rumble " "$work/pad.cassette" \
        && [ "$(grep -c '^command ' "$work/pad.cassette")" -eq 6 ]; then
    pass "haptics --record: the pad's identity and the cue's 6 timed commands, $(wc -c < "$work/pad.cassette") bytes"
    # Under TCG a command can come 10-15 ms late (the evdev upload itself is emulated): the replay
    # must find the same commands in the same order; offsets past 5 ms are reported, not failed.
    timeout 30 "$HWPROBE" haptics --device "replay:$work/pad.cassette" --cue success >"$work/rep.out" 2>"$work/rep.err"
    rc=$?
    if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && ! grep "command [0-9]" "$work/rep.err" | grep -qv "ms off, more than 5 ms"; }; then
        pass "haptics --device replay: in the VM: the same commands in the same order (exit $rc$(grep -c 'ms off' "$work/rep.err" | sed 's/^0$//; s/^./, & late by the VM/'))"
    else
        fail "haptics --device replay: in the VM" "exit $rc" "$(cat "$work/rep.err")" "$(cat "$work/pad.cassette")"
    fi
    emit_cassette evdev-pad "$work/pad.cassette"
else
    fail "haptics --record on evdev:$node" "$(cat "$work/pad3.out" "$work/rec.err")" "$(cat "$work/pad.cassette" 2>&1)"
fi
kill "$pad" 2>/dev/null
wait "$pad" 2>/dev/null

finish
