#!/bin/sh
# Hotplug against the real kernel: `hwprobe watch --json` hears the kernel's uevents (netlink, no
# polling) while devices come and go, and reports each as `added` and then `removed` with the same
# object `list` prints, its stable `id` included (issue 19, items 3 and 5):
#   - a camera: vivid loaded with modprobe, then unloaded with rmmod (id v4l2:@platform:vivid-000);
#   - a pad: a uinput pad with FF_RUMBLE created, then destroyed (evdev-rumble);
#   - a controller: a vhci controller attached through /dev/vhci, then closed.
# Runs inside the bench VM with modules bluetooth, hci_vhci, evdev and uinput: scripts/test-vm hotplug.
. "$(dirname "$0")/../guest-lib.sh"
PATH="/run/bench-vm/bin:$PATH"

[ ! -e /dev/video0 ] || { fail "no camera before vivid is loaded" "$(ls /dev/video*)"; finish; }

"$HWPROBE" watch --json --seconds 150 >"$work/watch.jsonl" 2>"$work/watch.err" &
watch=$!
# Ready once its uevent socket is bound: a NETLINK_KOBJECT_UEVENT (15) socket in group 1 (nothing
# else in this guest listens to uevents: no udev).
listening() { awk '$2 == 15 && $4 == "00000001" { found = 1 } END { exit !found }' /proc/net/netlink || ! kill -0 "$watch" 2>/dev/null; }
started=$(date +%s.%N)
wait_until 30 listening
elapsed "watch listening for uevents" "$started"
kill -0 "$watch" 2>/dev/null || { fail "hwprobe watch runs" "$(cat "$work/watch.err")"; finish; }

# seen EVENT SECTION PYTHON-CONDITION-ON-d: the first matching line's device, printed; 1 if none yet
seen() {
    "$PY" - "$work/watch.jsonl" "$1" "$2" "$3" <<'PY'
import json, sys
path, event, section, condition = sys.argv[1:]
for line in open(path):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    d = e["device"]
    if e["event"] == event and e["section"] == section and eval(condition):
        print(json.dumps({k: d[k] for k in ("uri", "id", "busInfo", "name", "driver") if k in d}, sort_keys=True)); sys.exit(0)
sys.exit(1)
PY
}
# expect_event NAME EVENT SECTION CONDITION [SECONDS]: waits up to SECONDS (20) for it
expect_event() {
    if wait_until "${5:-20}" seen "$2" "$3" "$4" >/dev/null; then
        pass "$1: $(seen "$2" "$3" "$4")"
    else
        fail "$1" "watch said:" "$(cat "$work/watch.jsonl")" "$(cat "$work/watch.err")"
    fi
}

# 1. A camera appears and goes away.
started=$(date +%s.%N)
modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x00 num_outputs=0 2>"$work/modprobe.err" \
    || fail "modprobe vivid" "$(cat "$work/modprobe.err")"
expect_event "vivid loaded: cameras added, named by its bus" added cameras \
    "d['uri'].startswith('v4l2:/dev/video') and d.get('id') == 'v4l2:@platform:vivid-000' and d.get('busInfo') == 'platform:vivid-000' and d['driver'] == 'vivid'"
rmmod vivid 2>"$work/rmmod.err" || fail "rmmod vivid" "$(cat "$work/rmmod.err")"
expect_event "vivid unloaded: the same camera removed" removed cameras "d.get('id') == 'v4l2:@platform:vivid-000'"
elapsed "camera added and removed" "$started"

# 2. A pad appears and goes away.
started=$(date +%s.%N)
"$PY" "$repo/Tests/BenchVM/uinput_pad.py" "$work/pad.jsonl" >"$work/pad.out" 2>"$work/pad.err" &
pad=$!
ready() { grep -q "^READY" "$work/pad.out" || ! kill -0 "$pad" 2>/dev/null; }
wait_until 20 ready
node="$(sed -n 's/^READY //p' "$work/pad.out")"
[ -n "$node" ] || fail "uinput pad created" "$(cat "$work/pad.out" "$work/pad.err")"
expect_event "uinput pad created: hapticDevices added" added hapticDevices \
    "d['uri'] == 'evdev:$node' and d['driver'] == 'evdev-rumble' and d.get('id') == 'evdev:$node'"
kill "$pad"; wait "$pad" 2>/dev/null
expect_event "uinput pad destroyed: the same pad removed" removed hapticDevices "d['uri'] == 'evdev:$node'"
elapsed "pad added and removed" "$started"

# 3. A controller appears and goes away.
started=$(date +%s.%N)
mkfifo "$work/vhci.in"
exec 6<>"$work/vhci.in"
"$PY" "$repo/Tests/BenchVM/vhci_hold.py" <&6 >"$work/vhci.out" 2>"$work/vhci.err" &
exec 6>&-
vhci=$!
ready() { grep -q "^READY" "$work/vhci.out" || ! kill -0 "$vhci" 2>/dev/null; }
wait_until 20 ready
hci="$(sed -n 's/^READY //p' "$work/vhci.out")"
[ -n "$hci" ] || fail "vhci controller attached" "$(cat "$work/vhci.out" "$work/vhci.err")"
expect_event "vhci controller attached: controllers added" added controllers "d['name'] == '$hci' and d['uri'] == 'hci:${hci#hci}'"
kill "$vhci"; wait "$vhci" 2>/dev/null
# The kernel is still setting the controller up (it waits up to 10 s for an answer to HCI Reset
# that never comes) and unregisters it after that.
expect_event "vhci closed: the same controller removed" removed controllers "d['name'] == '$hci'" 40
elapsed "controller added and removed" "$started"

# Every event is one JSON object per line with the contract's keys, times never going back.
verdict="$("$PY" - "$work/watch.jsonl" <<'PY'
import json, sys
last = 0.0
lines = [l for l in open(sys.argv[1]) if l.strip()]
for line in lines:
    e = json.loads(line)
    assert set(e) == {"event", "section", "device", "t"}, e
    assert e["event"] in ("added", "removed", "changed"), e
    assert e["t"] >= last, (e["t"], last)
    last = e["t"]
print(f"{len(lines)} lines")
PY
)" && pass "watch --json: $verdict, each {event, section, device, t}, in time order" \
   || fail "watch --json lines have the contract's shape" "$verdict" "$(cat "$work/watch.jsonl")"

kill -INT "$watch"
wait "$watch"
rc=$?
if [ $rc -eq 0 ]; then pass "Ctrl-C (SIGINT) ends watch with exit 0"; else fail "SIGINT ends watch with exit 0" "exit $rc" "$(cat "$work/watch.err")"; fi
finish
