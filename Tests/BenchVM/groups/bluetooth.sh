#!/bin/sh
# Bluetooth against the real kernel: a bumble virtual controller attached through /dev/vhci is the
# kernel's hci0, linked to bumble's mirror peripheral (Tests/Peers/ble_peer.py --profile mirror
# --vhci). Our host stack opens hci:0 through the user channel (HCIDEVDOWN, then bind). A second
# one on the same link, hci1, stays the kernel's: BlueZ and the kernel's stack meet hwprobe serve
# and pair there, and a third, hci2, is the device hwprobe relay stands before (Tests/BenchVM/kernel-peer.sh).
# Runs inside the bench VM with modules bluetooth and hci_vhci: scripts/test-vm bluetooth.
. "$(dirname "$0")/../guest-lib.sh"

BUSY="hci0 is busy: another program holds it through the HCI user channel (or it is still being set up): close that program and retry, or use another controller"
NO_CAP="needs CAP_NET_ADMIN (run with sudo or setcap cap_net_admin+ep on hwprobe)"

# The peer runs until it is stopped at the end (its stdin is a fifo nobody writes to).
mkfifo "$work/peer.in"
exec 5<>"$work/peer.in"
started=$(date +%s.%N)
"$PEER_PY" "$repo/Tests/Peers/ble_peer.py" --profile mirror --vhci --kernel-vhci 2 <&5 >"$work/peer.out" 2>"$work/peer.err" &
peer=$!
ready() { grep -q "^READY" "$work/peer.out" || ! kill -0 "$peer" 2>/dev/null; }
wait_until 90 ready
elapsed "peer ready (bumble imported, hci0 registered and set up by the kernel)" "$started"
if ! grep -q "^READY.* vhci=hci0 kernel=hci1/" "$work/peer.out"; then
    fail "bumble controllers attached through /dev/vhci become hci0 (ours) and hci1 (the kernel's)" "$(cat "$work/peer.out" "$work/peer.err")"
    finish
fi
pass "bumble controllers attached through /dev/vhci become hci0 (ours) and hci1 (the kernel's) ($(cat "$work/peer.out"))"
mirror="$(sed -n 's/.* address=\([^ ]*\).*/\1/p' "$work/peer.out")"
kernel="$(grep -o ' kernel=[^ ]*' "$work/peer.out" | sed -n '1s/ kernel=//p')"   # hci1: BlueZ's peer
device="$(grep -o ' kernel=[^ ]*' "$work/peer.out" | sed -n '2s/ kernel=//p')"   # hci2: the relayed device

# 1. list: the controller and the mirror, claimed by our driver, seen through the user channel.
#    hci0 is up first (as if bluetoothd had powered it on): our stack must bring it down itself.
"$PY" "$repo/Tests/BenchVM/hci_ctl.py" up 0 >"$work/up.out" 2>&1
check "hci0 is up before hwprobe opens it ($(cat "$work/up.out"))" grep -q "^UP hci0" "$work/up.out"
started=$(date +%s.%N)
"$HWPROBE" list --hci hci:0 --scan-seconds 3 --json >"$work/list.json" 2>"$work/list.err"
rc=$?
elapsed "hwprobe list --hci hci:0 --scan-seconds 3" "$started"
seen="$(json "$work/list.json" '[(p["address"], p.get("driver"), p.get("kind")) for p in j["peripherals"] if p["hci"] == "hci:0"]')"
controllers="$(json "$work/list.json" '[c["uri"] for c in j["controllers"]]')"
if [ $rc -eq 0 ] && echo "$controllers" | grep -q '"hci:0"' && echo "$seen" | grep -q "\"${mirror%/*}\", \"[^\"]*\", \"mirror\""; then
    pass "hwprobe list --hci hci:0 brings hci0 down, opens it and lists it and the mirror with its driver"
else
    fail "hwprobe list --hci hci:0 lists hci0 and the mirror with its driver" "exit $rc; controllers $controllers; peripherals on hci:0: $seen" "$(cat "$work/list.err")"
fi

# 2. The whole body scan, unattended.
started=$(date +%s.%N)
"$HWPROBE" scan --hci hci:0 --yes --json >"$work/scan.json" 2>"$work/scan.err"
rc=$?
elapsed "hwprobe scan --hci hci:0 --yes --json" "$started"
outcome="$(json "$work/scan.json" '[j["outcome"], j.get("result", {}).get("scanId"), j.get("result", {}).get("weightKg")]')"
if [ $rc -eq 0 ] && [ "$outcome" = '["complete", 40213, 72.35]' ]; then
    pass "hwprobe scan --hci hci:0 --yes completes a body scan ($outcome)"
else
    fail "hwprobe scan --hci hci:0 --yes completes a body scan" "exit $rc; $outcome" "$(cat "$work/scan.json" "$work/scan.err" | tail -n 30)"
fi

# 2b. A quiet hci: link costs no CPU (issue 26: a non-blocking link was read in a tight loop from
#     the first pause after traffic). Subscribed to the idle mirror's scanState for 6 s, nothing
#     arrives; hwprobe's CPU over the run, less a plain read's (start-up, connection, discovery),
#     stays far below the 6 s a spinning reader burns.
"$PY" - "$HWPROBE" "${mirror%/*}" >"$work/quiet.out" 2>&1 <<'PY'
import resource, subprocess, sys
hwprobe, address = sys.argv[1], sys.argv[2]
state = "7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00"
def cpu(arguments):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([hwprobe, "gatt", "--hci", "hci:0", address] + arguments, capture_output=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.returncode, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
read_rc, read_cpu = cpu(["--read", state])
quiet_rc, quiet_cpu = cpu(["--subscribe", state, "--seconds", "6"])
print(f"read exit {read_rc} {read_cpu:.2f} s CPU; subscribed 6 s exit {quiet_rc} {quiet_cpu:.2f} s CPU; extra {quiet_cpu - read_cpu:.2f} s")
sys.exit(0 if read_rc == 0 and quiet_rc == 0 and quiet_cpu - read_cpu < 1.5 else 1)
PY
rc=$?
if [ $rc -eq 0 ]; then pass "a quiet hci:0 link costs no CPU ($(cat "$work/quiet.out"))"
else fail "a quiet hci:0 link costs no CPU" "$(cat "$work/quiet.out")"; fi

# 3. Busy: another program holds hci0 through the user channel.
started=$(date +%s.%N)
mkfifo "$work/hold.in"
exec 6<>"$work/hold.in"
"$PY" "$repo/Tests/BenchVM/hci_ctl.py" hold 0 <&6 >"$work/hold.out" 2>&1 &
holder=$!
held() { grep -q "^HELD hci0" "$work/hold.out"; }
if wait_until 30 held; then
    "$HWPROBE" scan --hci hci:0 --yes --json >"$work/busy.json" 2>"$work/busy.err"
    rc=$?
    got="$(json "$work/busy.json" '[j["error"]["kind"], j["error"]["message"]]')"
    want="$("$PY" -c 'import json,sys; print(json.dumps(["busy", sys.argv[1]]))' "$BUSY")"
    if [ $rc -eq 3 ] && [ "$got" = "$want" ]; then pass "hci0 in use: exit 3, busy, \"$BUSY\""
    else fail "hci0 in use: exit 3, busy, \"$BUSY\"" "exit $rc; got $got" "$(cat "$work/busy.err")"; fi
    "$HWPROBE" scan --hci hci:0 --yes >"$work/busy.out" 2>"$work/busy.txt"
    rc=$?
    if [ $rc -eq 3 ] && [ "$(cat "$work/busy.txt")" = "hwprobe scan: $BUSY" ]; then pass "text mode: stderr is exactly \"hwprobe scan: $BUSY\""
    else fail "text mode: stderr is exactly \"hwprobe scan: $BUSY\"" "exit $rc" "$(cat "$work/busy.txt")"; fi
else
    fail "a second program holds hci0 through the user channel" "$(cat "$work/hold.out")"
fi
# (it holds the fifo read-write through its stdin, so it would never see an end of file)
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
exec 6>&-

elapsed "busy checks" "$started"

# 4. Without CAP_NET_ADMIN (an unprivileged user).
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    "$HWPROBE" scan --hci hci:0 --yes --json >"$work/perm.json" 2>"$work/perm.err"
rc=$?
got="$(json "$work/perm.json" '[j["error"]["kind"], j["error"]["message"]]')"
want="$("$PY" -c 'import json,sys; print(json.dumps(["permission", sys.argv[1]]))' "$NO_CAP")"
if [ $rc -eq 3 ] && [ "$got" = "$want" ]; then pass "without CAP_NET_ADMIN: exit 3, permission, \"$NO_CAP\""
else fail "without CAP_NET_ADMIN: exit 3, permission, \"$NO_CAP\"" "exit $rc; got $got" "$(cat "$work/perm.err")"; fi

# 5. And hci0 still works for root afterwards (nothing left half-open by the refusals).
"$HWPROBE" list --hci hci:0 --scan-seconds 1 --json >"$work/again.json" 2>"$work/again.err"
rc=$?
seen="$(json "$work/again.json" '[p["kind"] for p in j["peripherals"] if p["hci"] == "hci:0" and p.get("kind")]')"
if [ $rc -eq 0 ] && [ "$seen" = '["mirror"]' ]; then pass "after the refusals, hci:0 opens again and sees the mirror"
else fail "after the refusals, hci:0 opens again and sees the mirror" "exit $rc; $seen" "$(tail -n 20 "$work/again.err")"; fi

# 6. The kernel's own stack on hci1 as the peer of hwprobe serve and pair on hci0.
. "$repo/Tests/BenchVM/kernel-peer.sh"

kill "$peer" 2>/dev/null
wait "$peer" 2>/dev/null
exec 5>&-
finish
