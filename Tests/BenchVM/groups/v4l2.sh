#!/bin/sh
# V4L2 against the real kernel: vivid with an HDMI input and an HDMI output, its loop_video
# control on, so frames written to the output node come back on the capture node. A feeder
# (v4l2_feeder.py) shows the QR codes of a VB1 backup (made on the host by bench-vm-fixtures)
# on the output; `hwprobe import --camera v4l2:/dev/video0` must import and decrypt it.
# A second vivid instance is a plain webcam (discrete sizes) for `hwprobe list`.
# Runs inside the bench VM: scripts/test-vm v4l2.
. "$(dirname "$0")/../guest-lib.sh"

FIXTURES="${FIXTURES:-$repo/.build/bench-vm/fixtures}"
[ -s "$FIXTURES/codes.y4m" ] || { fail "fixtures in $FIXTURES (made by bench-vm-fixtures)"; finish; }
FEEDER="$repo/Tests/BenchVM/v4l2_feeder.py"

# vivid is loaded by the runner with the parameters in scripts/test-vm: instance 0 is an HDMI
# input (video0) and an HDMI output (video1), instance 1 a webcam input (video2).
nodes() { [ -e /dev/video0 ] && [ -e /dev/video1 ] && [ -e /dev/video2 ]; }
wait_until 10 nodes || { fail "vivid's /dev/video0..2 appear" "$(ls /dev/video* 2>&1)"; finish; }

# Both HDMI ends at 640x480p60 (DV timings index of that size), and the loop on.
index="$(v4l2-ctl -d /dev/video0 --list-dv-timings | awk '$1 == "Index:" { i = $2 }
    $1 == "Active" && $2 == "width:" { w = $3 } $1 == "Active" && $2 == "height:" && w == 640 && $3 == 480 { print i; exit }')"
if v4l2-ctl -d /dev/video0 --set-dv-bt-timings "index=$index" >/dev/null && v4l2-ctl -d /dev/video1 --set-dv-bt-timings "index=$index" >/dev/null \
    && v4l2-ctl -d /dev/video0 --set-ctrl loop_video=1; then
    pass "vivid: HDMI in and out at 640x480 (DV timings index $index), loop_video on"
else
    fail "vivid: HDMI in and out at 640x480, loop_video on"; finish
fi

# 1. list: both cameras, with what the driver itself reports (checked against v4l2-ctl).
"$HWPROBE" list --json >"$work/list.json" 2>"$work/list.err"
rc=$?
for node in video0 video2; do
    ours="$(json "$work/list.json" "sorted(f['fourcc'].strip() for c in j['cameras'] if c['uri'] == 'v4l2:/dev/$node' for f in c['formats'])")"
    # v4l2-ctl's names, written the way hwprobe writes them (padding dropped: 'Y16 -BE' is Y16-BE)
    theirs="$(v4l2-ctl -d /dev/$node --list-formats | sed -n "s/.*\]: '\([^']*\)'.*/\1/p" | sed 's/ *-BE$/-BE/; s/ *$//' | sort \
        | "$PY" -c 'import json,sys; print(json.dumps(sorted(l.strip() for l in sys.stdin)))')"
    card="$(json "$work/list.json" "[(c['card'], c['driver']) for c in j['cameras'] if c['uri'] == 'v4l2:/dev/$node']")"
    if [ $rc -eq 0 ] && [ "$ours" = "$theirs" ] && [ "$card" = '[["vivid", "vivid"]]' ]; then
        pass "hwprobe list: v4l2:/dev/$node is vivid with the same $(echo "$ours" | tr ',' '\n' | wc -l) formats v4l2-ctl lists"
    else
        fail "hwprobe list: v4l2:/dev/$node is vivid with the formats v4l2-ctl lists" "exit $rc; card $card" "ours:   $ours" "theirs: $theirs"
    fi
done
sizes="$(json "$work/list.json" "[f['sizes'] for c in j['cameras'] if c['uri'] == 'v4l2:/dev/video2' for f in c['formats'] if f['fourcc'] == 'GREY'][0]")"
theirs="$(v4l2-ctl -d /dev/video2 --list-framesizes GREY | sed -n 's/.*Discrete \([0-9]*x[0-9]*\).*/\1/p' \
    | "$PY" -c 'import json,sys; print(json.dumps([l.strip() for l in sys.stdin]))')"
if [ "$sizes" = "$theirs" ] && [ "$sizes" != "[]" ]; then pass "hwprobe list: the webcam's GREY sizes are v4l2-ctl's discrete sizes $sizes"
else fail "hwprobe list: the webcam's GREY sizes are v4l2-ctl's discrete sizes" "ours:   $sizes" "theirs: $theirs"; fi
hdmi="$(json "$work/list.json" "[f['sizes'] for c in j['cameras'] if c['uri'] == 'v4l2:/dev/video0' for f in c['formats'] if f['fourcc'] == 'GREY'][0]")"
if echo "$hdmi" | grep -qE '^\["[0-9]+x[0-9]+-[0-9]+x[0-9]+"\]$'; then pass "hwprobe list: the HDMI input's sizes are one range $hdmi"
else fail "hwprobe list: the HDMI input's sizes are one range" "$hdmi"; fi

# 2. Import through the loop: the feeder cycles through the blank frame and the four codes.
start_feeder() {
    "$PY" "$FEEDER" /dev/video1 "$FIXTURES/codes.y4m" "$@" >"$work/feed.out" 2>&1 &
    feeder=$!
    feeding() { grep -q "^FEEDING" "$work/feed.out" || ! kill -0 "$feeder" 2>/dev/null; }
    wait_until 30 feeding
    grep -q "^FEEDING" "$work/feed.out"
}
stop_feeder() { kill "$feeder" 2>/dev/null; wait "$feeder" 2>/dev/null; }

if start_feeder --repeat 12; then
    started=$(date +%s.%N)
    timeout 120 "$HWPROBE" import --camera v4l2:/dev/video0 --password-file "$FIXTURES/password" \
        --out "$work/vault.json" --json >"$work/import.json" 2>"$work/import.err"
    rc=$?
    elapsed "hwprobe import --camera v4l2:/dev/video0" "$started"
    got="$(json "$work/import.json" '[j.get("codes"), j.get("bytes")]')"
    if [ $rc -eq 0 ] && [ "$got" = "[4, $(wc -c < "$FIXTURES/plaintext")]" ] && cmp -s "$work/vault.json" "$FIXTURES/plaintext"; then
        pass "hwprobe import --camera v4l2:/dev/video0 imports and decrypts the backup shown through vivid"
    else
        fail "hwprobe import --camera v4l2:/dev/video0 imports and decrypts the backup" "exit $rc; $got" "$(cat "$work/import.json")" "$(tail -n 15 "$work/import.err")" "$(cat "$work/feed.out")"
    fi
    stop_feeder
else
    fail "the feeder streams to vivid's output /dev/video1" "$(cat "$work/feed.out")"
fi

# 3. The capture device goes away mid-stream (vivid instance 0 unbound, as if unplugged), after
#    one of four codes (the feeder shows only that one): a clean error, nothing written, no hang.
if start_feeder --repeat 12 --pictures 1; then
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

finish
