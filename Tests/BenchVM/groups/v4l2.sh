#!/bin/sh
# V4L2 against the real kernel: vivid with an HDMI input and an HDMI output, its loop_video
# control on, so frames written to the output node come back on the capture node. A feeder
# (v4l2_feeder.py) shows the QR codes of a VB1 backup (made on the host by bench-vm-fixtures)
# on the output; `hwprobe import --camera v4l2:/dev/video0` must import and decrypt it.
# A second vivid instance is a plain webcam (discrete sizes) for `hwprobe list`.
# Runs inside the bench VM: scripts/test-vm v4l2.
. "$(dirname "$0")/../guest-lib.sh"

. "$(dirname "$0")/../v4l2-lib.sh"

# vivid is loaded by the runner with the parameters in scripts/test-vm: instance 0 is an HDMI
# input (video0) and an HDMI output (video1), instance 1 a webcam input (video2).
nodes() { [ -e /dev/video0 ] && [ -e /dev/video1 ] && [ -e /dev/video2 ]; }
wait_until 10 nodes || { fail "vivid's /dev/video0..2 appear" "$(ls /dev/video* 2>&1)"; finish; }

hdmi_loop /dev/video0 /dev/video1

# 1. list: both cameras, with what the driver itself reports (checked against v4l2-ctl).
"$HWPROBE" list --json >"$work/list.json" 2>"$work/list.err"
rc=$?
for node in video0 video2; do list_matches_v4l2_ctl "$node"; done
sizes="$(json "$work/list.json" "[f['sizes'] for c in j['cameras'] if c['uri'] == 'v4l2:/dev/video2' for f in c['formats'] if f['fourcc'] == 'GREY'][0]")"
theirs="$(v4l2-ctl -d /dev/video2 --list-framesizes GREY | sed -n 's/.*Discrete \([0-9]*x[0-9]*\).*/\1/p' \
    | "$PY" -c 'import json,sys; print(json.dumps([l.strip() for l in sys.stdin]))')"
if [ "$sizes" = "$theirs" ] && [ "$sizes" != "[]" ]; then pass "hwprobe list: the webcam's GREY sizes are v4l2-ctl's discrete sizes $sizes"
else fail "hwprobe list: the webcam's GREY sizes are v4l2-ctl's discrete sizes" "ours:   $sizes" "theirs: $theirs"; fi
hdmi="$(json "$work/list.json" "[f['sizes'] for c in j['cameras'] if c['uri'] == 'v4l2:/dev/video0' for f in c['formats'] if f['fourcc'] == 'GREY'][0]")"
if echo "$hdmi" | grep -qE '^\["[0-9]+x[0-9]+-[0-9]+x[0-9]+"\]$'; then pass "hwprobe list: the HDMI input's sizes are one range $hdmi"
else fail "hwprobe list: the HDMI input's sizes are one range" "$hdmi"; fi

# 2. Import through the loop: the feeder cycles through the blank frame and the four codes.
imports_through_loop /dev/video0 /dev/video1 "single-planar GREY"

# 3. The capture device goes away mid-stream (vivid instance 0 unbound, as if unplugged), after
#    one of four codes (the feeder shows only that one): a clean error, nothing written, no hang.
if start_feeder /dev/video1 --repeat 12 --pictures 1; then
    timeout 60 "$HWPROBE" import --camera v4l2:/dev/video0 --password-file "$FIXTURES/password" \
        --out "$work/gone.json" --json >"$work/gone.out" 2>"$work/gone.err" &
    importer=$!
    one() { grep -q "1 of 4 scanned" "$work/gone.err" || ! kill -0 "$importer" 2>/dev/null; }
    if wait_until 60 one && kill -0 "$importer" 2>/dev/null; then
        echo vivid.0 > /sys/bus/platform/drivers/vivid/unbind
        started=$(date +%s.%N)
        wait "$importer"
        rc=$?
        elapsed "import ended after the unplug" "$started"
        got="$(json "$work/gone.out" '[j["error"]["kind"], j["error"]["message"]]')"
        if [ $rc -eq 1 ] && [ "$got" = '["incomplete", "the camera stopped after 1 of 4 codes"]' ] \
            && grep -qF "Camera /dev/video0 disappeared." "$work/gone.err" && [ ! -e "$work/gone.json" ]; then
            pass "vivid unbound mid-stream: exit 1, incomplete \"the camera stopped after 1 of 4 codes\", \"Camera /dev/video0 disappeared.\""
        else
            fail "vivid unbound mid-stream: exit 1, incomplete, camera disappeared" "exit $rc; $got" "$(cat "$work/gone.out")" "$(tail -n 15 "$work/gone.err")"
        fi
    else
        fail "import sees 1 of 4 codes before the unplug" "$(cat "$work/gone.out")" "$(tail -n 15 "$work/gone.err")"
        kill "$importer" 2>/dev/null
    fi
    stop_feeder
    if grep -q "No such device" "$work/feed.out"; then pass "the feeder saw the output go too: $(tail -n 1 "$work/feed.out")"; fi
else
    fail "the feeder streams to vivid's output /dev/video1 (second run)" "$(cat "$work/feed.out")"
fi

# 4. A cassette of the camera (issue 17): the import through the loop again, recorded. The cassette
#    (vivid's identity and the frames the pipeline took, beside it in .y4m) goes back to the host,
#    which imports the same backup from it (`--camera replay:`) and must get the same result.
#    Section 3 unbound vivid instance 0: bound again, it is /dev/video0 and /dev/video1 once more.
echo vivid.0 > /sys/bus/platform/drivers/vivid/bind 2>/dev/null
if wait_until 10 sh -c '[ -e /dev/video0 ] && [ -e /dev/video1 ]' && hdmi_loop /dev/video0 /dev/video1 && start_feeder /dev/video1 --repeat 12; then
    timeout 120 "$HWPROBE" import --camera v4l2:/dev/video0 --password-file "$FIXTURES/password" \
        --out "$work/rec-vault.json" --json --record "$work/vivid.cassette" >"$work/rec.json" 2>"$work/rec.err"
    rc=$?
    stop_feeder
    if [ $rc -eq 0 ] && grep -q "^device camera v4l2:/dev/video0$" "$work/vivid.cassette" && grep -q "^identity vivid " "$work/vivid.cassette" \
            && [ -s "$work/vivid.cassette.y4m" ]; then
        pass "import --record: vivid's identity and $(grep -c '^frame ' "$work/vivid.cassette") frames, $(wc -c < "$work/vivid.cassette") + $(wc -c < "$work/vivid.cassette.y4m") bytes"
        cp "$work/rec.json" "$work/vivid.json"
        emit_cassette v4l2-vivid "$work/vivid.cassette" "$work/vivid.cassette.y4m" "$work/vivid.json"
    else
        fail "import --record from vivid" "exit $rc" "$(cat "$work/rec.json")" "$(tail -n 5 "$work/rec.err")" "$(head -n 12 "$work/vivid.cassette" 2>&1)"
    fi
else
    fail "vivid reloaded for the recording, the loop and the feeder" "$(ls /dev/video* 2>&1)" "$(cat "$work/feed.out" 2>&1)"
fi

finish
