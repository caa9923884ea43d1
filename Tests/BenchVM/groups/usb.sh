#!/bin/sh
# libusb against the real kernel's USB host stack: ffs_xbox360_pad.py is a wired Xbox 360 pad
# (045e:028e) made with configfs + FunctionFS and bound to dummy_hcd's UDC (full speed, like the
# real pad), logging every OUT report. `hwprobe list` must show usb:045e:028e claimed by xbox360-usb;
# `hwprobe haptics` must send exactly the reports the pattern table and the documented report and
# ring mapping give for every cue (expectations written on the host by `bench-vm-fixtures haptics`);
# unbinding the UDC mid-cue (an unplug) must be reported once and hang nothing.
# No kernel driver binds the pad by itself: nothing loads xpad (the guest runs no udev, and this
# kernel has no uevent helper), which the group checks. Then it loads xpad on purpose: our path must
# refuse the held pad, take it with --detach-kernel-driver and give it back, and xpad's own force
# feedback (through evdev) must send the same rumble reports as our encoder.
# Runs inside the bench VM with modules dummy_hcd (is_high_speed=0), libcomposite, usb_f_fs:
# scripts/test-vm usb.
. "$(dirname "$0")/../guest-lib.sh"

FIXTURES="${FIXTURES:-$repo/.build/bench-vm/fixtures}"
expect="$FIXTURES/haptics"
[ -s "$expect/cues" ] || { fail "haptic expectations in $expect (made by bench-vm-fixtures haptics)"; finish; }
PAD=usb:045e:028e

# The first report that finds $work/arm makes the gadget unbind itself from the UDC (an unplug mid-cue:
# a shell here reacting to a signal is slower than a whole cue under TCG) and write UNPLUGGED into
# this fifo, held open here so neither side blocks.
mkfifo "$work/first"
exec 7<>"$work/first"
started=$(date +%s.%N)
"$PY" "$repo/Tests/BenchVM/ffs_xbox360_pad.py" "$work/pad.jsonl" --signal "$work/first" --arm "$work/arm" >"$work/pad.out" 2>"$work/pad.err" &
pad=$!
ready() { grep -q "^READY" "$work/pad.out" || ! kill -0 "$pad" 2>/dev/null; }
wait_until 30 ready
gadget="$(sed -n 's/^READY gadget=\([^ ]*\).*/\1/p' "$work/pad.out")"
# The host side: the device and its interface 0 in sysfs (the hub enumerates it after the bind).
device=""
enumerated() {
    for d in /sys/bus/usb/devices/*; do
        [ "$(cat "$d/idVendor" 2>/dev/null):$(cat "$d/idProduct" 2>/dev/null)" = "045e:028e" ] && [ -d "$d/${d##*/}:1.0" ] \
            && { device="$d"; return 0; }
    done
    return 1
}
if [ -z "$gadget" ] || ! wait_until 20 enumerated; then
    fail "the FunctionFS Xbox 360 pad is bound to dummy_hcd and enumerated" "$(cat "$work/pad.out" "$work/pad.err" "$work/pad.jsonl")"
    finish
fi
elapsed "gadget bound and enumerated" "$started"
iface="$device/${device##*/}:1.0"
shape="$(cat "$device/speed") $(cat "$iface/bInterfaceClass")/$(cat "$iface/bInterfaceSubClass")/$(cat "$iface/bInterfaceProtocol") $(cat "$iface/ep_81/type" 2>/dev/null) IN 0x81, $(cat "$iface/ep_02/type" 2>/dev/null) OUT 0x02"
if [ "$shape" = "12 ff/5d/01 Interrupt IN 0x81, Interrupt OUT 0x02" ]; then
    pass "the gadget enumerates as the real pad: ${device##*/}, $(cat "$device/product"), full speed, interface 0 $shape"
else
    fail "the gadget enumerates as the real pad (12 Mbit/s, ff/5d/01, interrupt IN 0x81 and OUT 0x02)" "$shape"
fi
if [ ! -e "$iface/driver" ]; then pass "no kernel driver is bound to interface 0 (xpad loaded: $(grep -c '^xpad ' /proc/modules))"
else fail "no kernel driver is bound to interface 0" "$(readlink "$iface/driver")"; fi

# 1. list
"$HWPROBE" list --json >"$work/list.json" 2>"$work/list.err"
rc=$?
seen="$(json "$work/list.json" "[(d['uri'], d['driver'], d['name']) for d in j['hapticDevices'] if d['uri'].startswith('usb:')]")"
if [ $rc -eq 0 ] && [ "$seen" = "[[\"$PAD\", \"xbox360-usb\", \"Controller\"]]" ]; then
    pass "hwprobe list: $PAD, driver xbox360-usb, named by the pad (\"Controller\")"
else
    fail "hwprobe list: $PAD with driver xbox360-usb" "exit $rc; usb haptic devices: $seen" "$(cat "$work/list.err")"
fi

# 2. Every cue: the reports the gadget read, against the expectations. A report's transfer ends
#    when the gadget's read returns, just before it logs it: wait (with a deadline) for the lines.
reports() { sed -n 's/^{"op": "report", "hex": "\([0-9a-f ]*\)"}$/\1/p' "$work/pad.jsonl"; }
enough() { [ "$(reports | wc -l)" -ge "$1" ]; }
started=$(date +%s.%N)
for cue in $(cat "$expect/cues"); do
    : > "$work/pad.jsonl"
    timeout 30 "$HWPROBE" haptics --device "$PAD" --cue "$cue" >"$work/cue.out" 2>"$work/cue.err"
    rc=$?
    want=$(wc -l < "$expect/xbox360-$cue.hex")
    wait_until 5 enough "$want"
    if [ $rc -eq 0 ] && [ "$(reports)" = "$(cat "$expect/xbox360-$cue.hex")" ]; then
        pass "haptics --cue $cue: the pad got exactly the table's $want reports ($(reports | tr '\n' '|' | sed 's/|$//; s/|/ | /g'))"
    else
        fail "haptics --cue $cue: the pad gets exactly the table's reports" "exit $rc" "got:" "$(reports)" "expected:" \
            "$(cat "$expect/xbox360-$cue.hex")" "$(cat "$work/cue.err")"
    fi
done
elapsed "$(wc -l < "$expect/cues") cues" "$started"

# 3. Not ours to open (an unprivileged user: usbfs nodes are root's).
: > "$work/pad.jsonl"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    timeout 30 "$HWPROBE" haptics --device "$PAD" --cue selection >"$work/perm.out" 2>"$work/perm.err"
rc=$?
case "$(cat "$work/perm.err")" in
    "hwprobe haptics: no permission to use usb:045e:028e@"*": install the udev rule from the README or run with sudo") said=1 ;;
    *) said=0 ;;
esac
if [ $rc -eq 3 ] && [ $said = 1 ] && [ -z "$(reports)" ]; then
    pass "as nobody: exit 3, \"$(sed 's/^hwprobe haptics: //' "$work/perm.err")\", nothing reached the pad"
else
    fail "as nobody: exit 3, \"no permission to use usb:045e:028e@…\"" "exit $rc" "$(cat "$work/perm.out" "$work/perm.err")" "$(reports)"
fi

# 4. The kernel's own driver: load xpad (and evdev). It binds interface 0, so our libusb path must
#    refuse with the exact busy message, take the pad with --detach-kernel-driver and give it back;
#    and the pad's evdev node (xpad's force feedback) must turn the same cues into the same rumble
#    reports as our own encoder: the kernel's xpad.c is an independent encoder of the wire format.
BUSY="hwprobe haptics: the kernel's xpad driver holds this pad: use evdev:/dev/input/eventN (hwprobe list shows it) or pass --detach-kernel-driver"
: > "$work/pad.jsonl"
started=$(date +%s.%N)
modprobe evdev && modprobe xpad
xnode=""
# xpad holds interface 0 and its evdev node exists (xnode: /dev/input/eventN)
xpad_bound() {
    case "$(readlink "$iface/driver" 2>/dev/null)" in */xpad) ;; *) return 1 ;; esac
    for e in "$iface"/input/input*/event*; do [ -c "/dev/input/${e##*/}" ] && { xnode="/dev/input/${e##*/}"; return 0; }; done
    return 1
}
led() { reports | grep -qx "$1"; }
if wait_until 20 xpad_bound && wait_until 5 led "01 03 02"; then
    elapsed "xpad loaded and bound" "$started"
    pass "xpad binds interface 0 ($xnode) and lights the ring for player 1 (01 03 02)"
    "$HWPROBE" list --json >"$work/list2.json" 2>"$work/list2.err"
    seen="$(json "$work/list2.json" "sorted((d['uri'], d['driver']) for d in j['hapticDevices'])")"
    if [ "$seen" = "[[\"evdev:$xnode\", \"evdev-rumble\"], [\"$PAD\", \"xbox360-usb\"]]" ]; then
        pass "hwprobe list with xpad: the pad twice, $PAD (xbox360-usb) and evdev:$xnode (evdev-rumble)"
    else
        fail "hwprobe list with xpad: $PAD and evdev:$xnode" "$seen"
    fi

    timeout 30 "$HWPROBE" haptics --device "$PAD" --cue selection >"$work/busy.out" 2>"$work/busy.err"
    rc=$?
    if [ $rc -eq 3 ] && [ "$(cat "$work/busy.err")" = "$BUSY" ]; then pass "xpad holds the pad: exit 3, \"${BUSY#hwprobe haptics: }\""
    else fail "xpad holds the pad: exit 3 with the busy message" "exit $rc" "$(cat "$work/busy.out" "$work/busy.err")"; fi

    : > "$work/pad.jsonl"
    timeout 30 "$HWPROBE" haptics --device "$PAD" --cue success --detach-kernel-driver >"$work/detach.out" 2>"$work/detach.err"
    rc=$?
    # given back on close: xpad probes the pad again and lights player 1 again (a new evdev node)
    rebound=0
    wait_until 20 xpad_bound && wait_until 5 led "01 03 02" && rebound=1
    want="$(cat "$expect/xbox360-success.hex")"
    if [ $rc -eq 0 ] && [ "$(reports | head -n "$(echo "$want" | wc -l)")" = "$want" ] && [ $rebound = 1 ]; then
        pass "--detach-kernel-driver: the cue's reports exactly, then xpad has the pad back ($xnode, 01 03 02 again)"
    else
        fail "--detach-kernel-driver: the cue's reports, then xpad has the pad back" "exit $rc; rebound $rebound" "$(reports)" "$(cat "$work/detach.err")"
    fi

    # The same cues through xpad's force feedback: the rumble reports only (no light through evdev),
    # and repeats of one report collapsed (ff-memless may send a stop twice: the effect's own end
    # and our stop can both reach xpad).
    rumbles() { grep '^00 08 ' | uniq; }
    for cue in selection success error; do
        : > "$work/pad.jsonl"
        want="$(rumbles < "$expect/xbox360-$cue.hex")"
        timeout 30 "$HWPROBE" haptics --device "evdev:$xnode" --cue "$cue" >"$work/x.out" 2>"$work/x.err"
        rc=$?
        settled() { [ "$(reports | rumbles)" = "$want" ]; }
        if [ $rc -eq 0 ] && wait_until 5 settled; then
            pass "evdev:$xnode (xpad) --cue $cue: xpad sends the rumble reports our encoder sends ($(echo "$want" | wc -l))"
        else
            fail "evdev:$xnode (xpad) --cue $cue: xpad sends the rumble reports our encoder sends" "exit $rc" "got:" "$(reports)" "expected:" "$want" "$(cat "$work/x.err")"
        fi
    done
else
    fail "xpad binds interface 0 and lights player 1" "$(readlink "$iface/driver")" "$(reports)"
fi
# Unload it again: the unplug below is our libusb path's.
rmmod xpad
unbound() { [ ! -e "$iface/driver" ]; }
wait_until 10 unbound || fail "xpad unloaded lets go of interface 0" "$(readlink "$iface/driver")"

# 5. Unplug mid-cue: the gadget, armed, unbinds its UDC right after the first report of `error`
#    (400 ms long; the host's second report is already on its way).
: > "$work/pad.jsonl"
: > "$work/arm"
started=$(date +%s.%N)
timeout 30 "$HWPROBE" haptics --device "$PAD" --cue error >"$work/gone.out" 2>"$work/gone.err" &
player=$!
signalled="$(timeout 20 head -n 1 <&7)"
wait "$player"
rc=$?
elapsed "haptics --cue error, unplugged after the first report" "$started"
sent="$(reports | wc -l)"
message="$(cat "$work/gone.err")"
case "$message" in
    "hwprobe haptics: haptic device usb:045e:028e@"*" disappeared: carrying on without haptics") said=1 ;;
    *) said=0 ;;
esac
if [ "$signalled" = UNPLUGGED ] && [ $rc -eq 3 ] && [ $said = 1 ] && [ "$(grep -c . "$work/gone.err")" -eq 1 ] \
    && [ "$sent" -eq 1 ]; then
    pass "UDC unbound mid-cue (by the gadget) after $sent of $(wc -l < "$expect/xbox360-error.hex") reports: exit 3, once: $message"
else
    fail "UDC unbound mid-cue: exit 3, \"haptic device usb:… disappeared…\" once, no hang" "signal '$signalled'; exit $rc (124: hung); $sent reports" \
        "$(cat "$work/gone.out" "$work/gone.err")" "$(cat "$work/pad.jsonl")"
fi
# and with the pad gone, a new run says so at once instead of waiting
timeout 30 "$HWPROBE" haptics --device "$PAD" --cue selection >"$work/after.out" 2>"$work/after.err"
rc=$?
if [ $rc -eq 3 ] && grep -qF "no Xbox 360 pad usb:045e:028e is attached" "$work/after.err"; then
    pass "after the unplug: exit 3, $(cat "$work/after.err")"
else
    fail "after the unplug: exit 3, no pad attached" "exit $rc" "$(cat "$work/after.out" "$work/after.err")"
fi

kill "$pad" 2>/dev/null
wait "$pad" 2>/dev/null
exec 7>&-
finish
