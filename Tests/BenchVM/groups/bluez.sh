#!/bin/sh
# The Linux kernel's own Bluetooth stack as the independent peer of hwprobe's peripheral role and
# Security Manager (issues 28 and 29). Two bumble virtual controllers share one link
# (Tests/Peers/vhci_link.py), each the kernel's hciN through /dev/vhci: hwprobe opens hci0 through
# the HCI user channel, the kernel manages hci1 (its LE connections, L2CAP, ATT sockets and SMP),
# driven by BlueZ's own tools: btmgmt (the kernel's management API), gatttool (an ATT client on
# the kernel's L2CAP socket) and the kernel's debugfs (the keys it holds).
#   1. gatttool on hci1 discovers, reads, subscribes to and writes hwprobe serve mirror-v1 on hci0;
#   2. btmgmt pair from hci1 bonds with hwprobe serve --pairing required (Just Works and Passkey
#      Entry), then gatttool reads a value that needs encryption, encrypted with that bond;
#   3. hwprobe pair on hci0 bonds with hci1 advertising through the kernel.
# Runs inside the bench VM with modules bluetooth and hci_vhci: scripts/test-vm bluez.
. "$(dirname "$0")/../guest-lib.sh"

K=1                     # the kernel's controller
KADDR=A0:A0:A0:00:00:11
HADDR=A0:A0:A0:00:00:10 # hwprobe's (hci0)
export XDG_STATE_HOME="$work/state"
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
keys="/sys/kernel/debug/bluetooth/hci$K/long_term_keys"

# btmgmt quits at the end of its standard input, even before the kernel has answered: give it one
# that stays open (a fifo held by this shell) and a deadline.
mkfifo "$work/mgmt.in"
exec 7<>"$work/mgmt.in"
mgmt() { timeout 20 btmgmt --index $K "$@" <&7; }
# mgmt_pair OUT ANSWER ARGS...: btmgmt pair ARGS, answering its prompt (the kernel asking user space
# to confirm, or for a passkey) with ANSWER through its standard input; its exit status.
mgmt_pair() {
    local out="$1" answer="$2" pid answered=0 deadline=$(( $(date +%s) + 40 ))
    shift 2
    timeout 40 btmgmt --index $K pair "$@" <&7 >"$out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
        if [ $answered = 0 ] && grep -q "User Confirm\|request passkey" "$out"; then
            echo "$answer" >&7
            answered=1
        fi
        sleep 0.1
    done
    wait "$pid"
}

# hwprobe_serve NAME ARGS...: hwprobe serve on hci0 in the background ($served: its pid), until
# its advertising line is out; $advertised is the address it advertises from (ADDR/random).
hwprobe_serve() {
    local name="$1"; shift
    "$HWPROBE" serve --hci hci:0 "$@" --json --seconds 240 >"$work/$name.json" 2>"$work/$name.err" &
    served=$!
    advertising() { grep -q '"event":"advertising"' "$work/$name.json" || ! kill -0 "$served" 2>/dev/null; }
    wait_until 30 advertising
    advertised="$(json_lines "$work/$name.json" '[l["address"] for l in j if l["event"] == "advertising"][0]')"
    case "$advertised" in C*|D*|E*|F*) advertised="$advertised/random" ;; esac
}
stop_serve() { kill -INT "$served" 2>/dev/null; wait "$served" 2>/dev/null; }
# json_lines FILE EXPRESSION: like json, for a file of JSON lines (j: the list of objects)
json_lines() { "$PY" -c 'import json,sys; j=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]; v=eval(sys.argv[2]); print(json.dumps(v) if not isinstance(v,str) else v)' "$1" "$2" 2>&1; }
# gatttool_client ARGS...: Tests/BenchVM/gatttool_client.py, its checks counted as this group's
gatttool_client() {
    "$PY" "$repo/Tests/BenchVM/gatttool_client.py" "$@" >"$work/gatttool.out" 2>&1
    while IFS= read -r line; do
        case "$line" in
            "ok - "*) pass "gatttool: ${line#ok - }" ;;
            "not ok - "*) checks=$((checks + 1)); failures=$((failures + 1)); echo "not ok - gatttool: ${line#not ok - }" ;;
            *) echo "$line" ;;
        esac
    done <"$work/gatttool.out"
}

mkfifo "$work/link.in"
exec 5<>"$work/link.in"
started=$(date +%s.%N)
"$PEER_PY" "$repo/Tests/Peers/vhci_link.py" --count 2 <&5 >"$work/link.out" 2>"$work/link.err" &
link=$!
ready() { grep -q "^READY" "$work/link.out" || ! kill -0 "$link" 2>/dev/null; }
wait_until 120 ready
elapsed "two bumble controllers on one link, hci0 and hci1 through /dev/vhci" "$started"
if ! grep -q "^READY hci0=$HADDR hci1=$KADDR" "$work/link.out"; then
    fail "two bumble controllers on one link become hci0 and hci1" "$(cat "$work/link.out" "$work/link.err")"
    finish
fi
pass "two bumble controllers on one link become hci0 and hci1 ($(cat "$work/link.out"))"

# The kernel's controller, powered by the kernel's management API as bluetoothd would: LE only.
started=$(date +%s.%N)
mgmt bredr off >"$work/mgmt.log" 2>&1
mgmt le on >>"$work/mgmt.log" 2>&1
mgmt bondable on >>"$work/mgmt.log" 2>&1
mgmt sc on >>"$work/mgmt.log" 2>&1
mgmt io-cap 3 >>"$work/mgmt.log" 2>&1
mgmt power on >>"$work/mgmt.log" 2>&1
mgmt info >"$work/info.out" 2>&1
elapsed "btmgmt: hci$K LE only, powered" "$started"
if grep -q "current settings:.*powered.*bondable.*le.*secure-conn" "$work/info.out"; then
    pass "btmgmt powers hci$K on, LE only, bondable, Secure Connections ($(grep "current settings" "$work/info.out" | sed 's/^[[:space:]]*//'))"
else
    fail "btmgmt powers hci$K on, LE only, bondable, Secure Connections" "$(cat "$work/mgmt.log" "$work/info.out")"
fi

# 1. The kernel's ATT client reads and subscribes to hwprobe serving the mirror.
started=$(date +%s.%N)
hwprobe_serve mirror mirror-v1
gatttool_client mirror hci$K "$advertised"
stop_serve
elapsed "gatttool against hwprobe serve mirror-v1" "$started"
seen="$(json_lines "$work/mirror.json" '[l.get("central") for l in j if l["event"] == "connected"][:1] + sorted({l["uuid"][4:8] for l in j if l["event"] == "subscribed"}) + [(l.get("error") or "ok")[:4] for l in j if l["event"] == "write" and l["uuid"][4:8] == "0004"] + [l["value"] for l in j if l["event"] == "notified" and l["uuid"][4:8] == "0005"]')"
if [ "$seen" = "[\"$KADDR\", \"0005\", \"0006\", \"0007\", \"0x81\", \"ok\", \"010000\", \"020000\"]" ]; then
    pass "serve saw the kernel's controller connect, subscribe to all three, a refused then an accepted scanToken, and notified warmingUp and ready ($seen)"
else
    fail "serve's side of the kernel's session" "$seen" "$(tail -n 30 "$work/mirror.json" "$work/mirror.err")"
fi

# 2. The kernel pairs with hwprobe serve --pairing required (btmgmt pair, the kernel as central
#    and initiator), then reads values that need security with gatttool, encrypted with the bond.
cat >"$work/secure.json" <<'JSON'
{"name": "Kernel Pairing",
 "services": [{"uuid": "181A", "characteristics": [
   {"uuid": "2A6E", "properties": ["read"], "value": "0a01"},
   {"uuid": "2A6F", "properties": ["read"], "value": "3200", "security": {"read": "encrypted"}},
   {"uuid": "2A1F", "properties": ["read"], "value": "1234", "security": {"read": "authenticated"}}]}]}
JSON
# kernel_ltk PEER: the kernel's long-term key for PEER (debugfs, least significant octet first)
# turned to the bond store's order (most significant first); "none" when it has none.
kernel_ltk() { "$PY" -c 'import sys
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == sys.argv[2]: print(bytes.fromhex(f[-1])[::-1].hex()); break
else: print("none")' "$keys" "$1" 2>&1; }
# hwprobe_ltk PEER: hwprobe's key for PEER from hci0's bond store
hwprobe_ltk() { "$PY" -c 'import json,sys,glob
for path in glob.glob(sys.argv[1] + "/hwprobe/bonds/*.json"):
    for b in json.load(open(path))["bonds"]:
        if b["identity"] == sys.argv[2]: print((b.get("peripheralKey") or b.get("centralKey"))["ltk"].lower()); sys.exit()
print("none")' "$XDG_STATE_HOME" "$1" 2>&1; }

started=$(date +%s.%N)
export XDG_STATE_HOME="$work/state-jw"
hwprobe_serve jw "profile:$work/secure.json" --pairing required
mgmt_pair "$work/pair-jw.out" yes -c 3 -t 2 "${advertised%/*}"
rc=$?
elapsed "btmgmt pair (Just Works) with hwprobe serve --pairing required" "$started"
paired="$(json_lines "$work/jw.json" '[[l.get("method"), l.get("secureConnections"), l.get("error")] for l in j if l["event"] == "paired"]')"
if [ $rc -eq 0 ] && grep -q "Paired with ${advertised%/*}" "$work/pair-jw.out" && [ "$paired" = '[["just-works", true, null]]' ]; then
    pass "btmgmt pair -c 3 (NoInputNoOutput): the kernel bonds with serve by LE Secure Connections Just Works ($(tr '\n' ' ' <"$work/pair-jw.out"); serve: $paired)"
else
    fail "btmgmt pair -c 3 (NoInputNoOutput) bonds with serve by Secure Connections Just Works" "exit $rc: $(cat "$work/pair-jw.out")" "serve: $paired" "$(tail -n 20 "$work/jw.json" "$work/jw.err")"
fi
ours="$(hwprobe_ltk "$KADDR")"
theirs="$(kernel_ltk "${advertised%/*}")"
if [ "$ours" != none ] && [ "$ours" = "$theirs" ]; then
    pass "the kernel (debugfs long_term_keys) and serve's bond store hold the same LTK for each other"
else
    fail "the kernel and serve's bond store hold the same LTK" "serve's: $ours" "kernel's: $theirs" "$(cat "$keys")"
fi
gatttool_client protected hci$K "$advertised" medium 2A6E=0a01 2A6F=3200 2A1F=refused:authentication
stop_serve
seen="$(json_lines "$work/jw.json" '[l["event"] + ("" if l["event"] != "encrypted" else " level %d" % l["level"]) for l in j if l["event"] in ("connected", "paired", "encrypted", "disconnected")]')"
if [ "$(echo "$seen" | "$PY" -c 'import json,sys; e=json.load(sys.stdin); print(e[e.index("connected", 1):].count("paired"), e[e.index("connected", 1):].count("encrypted level 2"))' 2>&1)" = "0 1" ]; then
    pass "gatttool's connection was encrypted with the bond, no second pairing ($seen)"
else
    fail "gatttool's connection was encrypted with the bond, no second pairing" "$seen"
fi
elapsed "Just Works, both sides' keys, a protected read" "$started"

kill "$link" 2>/dev/null
wait "$link" 2>/dev/null
exec 5>&- 7>&-
finish
