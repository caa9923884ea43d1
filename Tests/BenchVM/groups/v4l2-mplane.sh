#!/bin/sh
# Multi-planar V4L2 against the real kernel: vivid with multiplanar=2 speaks only the
# multi-planar API (V4L2_CAP_VIDEO_CAPTURE_MPLANE, as many laptop and SoC cameras do), with an
# HDMI input looped back from an HDMI output. `hwprobe list` must show it like any camera, and
# `hwprobe import --camera v4l2:/dev/video0` must import and decrypt the backup the feeder
# shows, once in GREY (one plane) and once in NM12 (a Y plane and a CbCr plane, each mapped on
# its own; HWPROBE_V4L2_FORMAT asks for it, and vivid loops a frame back only when capture and
# output formats match, so the codes can only be read from the NM12 Y plane).
# Runs inside the bench VM: scripts/test-vm v4l2-mplane.
. "$(dirname "$0")/../guest-lib.sh"
. "$(dirname "$0")/../v4l2-lib.sh"

# vivid is loaded by the runner (scripts/test-vm): one instance, HDMI input video0, HDMI output video1.
nodes() { [ -e /dev/video0 ] && [ -e /dev/video1 ]; }
wait_until 10 nodes || { fail "vivid's /dev/video0..1 appear" "$(ls /dev/video* 2>&1)"; finish; }

caps="$(v4l2-ctl -d /dev/video0 --info 2>&1 | sed -n '/Device Caps/,$p')"
if echo "$caps" | grep -q "Video Capture Multiplanar" && ! echo "$caps" | grep -qE "^[[:space:]]+Video Capture$"; then
    pass "vivid multiplanar=2: /dev/video0's device caps are multi-planar capture only"
else
    fail "vivid multiplanar=2: /dev/video0's device caps are multi-planar capture only" "$caps"; finish
fi

hdmi_loop /dev/video0 /dev/video1

# 1. list: the multi-planar camera with the formats the driver reports, multi-plane ones included.
"$HWPROBE" list --json >"$work/list.json" 2>"$work/list.err"
rc=$?
list_matches_v4l2_ctl video0
planar="$(json "$work/list.json" "sorted(f['fourcc'] for c in j['cameras'] if c['uri'] == 'v4l2:/dev/video0' for f in c['formats'] if f['fourcc'] in ('NM12', 'YM12', 'GREY'))")"
if [ "$planar" = '["GREY", "NM12", "YM12"]' ]; then pass "hwprobe list: v4l2:/dev/video0 offers GREY and the two-plane NM12 and three-plane YM12"
else fail "hwprobe list: v4l2:/dev/video0 offers GREY, NM12 and YM12" "$planar" "$(cat "$work/list.err")"; fi

# 2. Import through the loop, in the cheapest format (GREY, one plane) and in NM12 (two planes).
imports_through_loop /dev/video0 /dev/video1 "multi-planar GREY"
export HWPROBE_V4L2_FORMAT=NM12
imports_through_loop /dev/video0 /dev/video1 "multi-planar NM12, two planes" --format NM12
unset HWPROBE_V4L2_FORMAT

# 3. The control for 2: with NM12 on the output and GREY (the cheapest) on the capture, vivid does
#    not loop the frames back, so no code may be read; the NM12 import above read its own Y plane.
if start_feeder /dev/video1 --repeat 12 --format NM12; then
    timeout 60 "$HWPROBE" import --camera v4l2:/dev/video0 --password-file "$FIXTURES/password" --timeout 8 \
        --out "$work/control.json" --json >"$work/control.out" 2>"$work/control.err"
    rc=$?
    if [ $rc -ne 0 ] && [ ! -e "$work/control.json" ] && ! grep -q "of 4 scanned" "$work/control.err"; then
        pass "control: NM12 out, GREY in: vivid loops nothing back, no code read (exit $rc: $(json "$work/control.out" 'j["error"]["message"]'))"
    else
        fail "control: NM12 out, GREY in: no code read" "exit $rc" "$(cat "$work/control.out")" "$(tail -n 5 "$work/control.err")"
    fi
    stop_feeder
else
    fail "the feeder streams NM12 to vivid's output /dev/video1 (control)" "$(cat "$work/feed.out")"
fi

finish
