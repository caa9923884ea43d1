# Sourced by groups/bluetooth.sh, with its peer still running (Tests/Peers/ble_peer.py --vhci
# --kernel-vhci 2, one bumble import for all parts): the Linux kernel's own Bluetooth stack as
# the independent peer of hwprobe's peripheral role and Security Manager (issues 28 and 29).
# hwprobe opens hci0 through the HCI user channel; the kernel manages hci1 on the same link (its
# LE connections, L2CAP, ATT sockets and SMP), driven by BlueZ's own tools: btmgmt (the kernel's
# management API), gatttool (an ATT client on the kernel's L2CAP socket), a scripted agent on the
# management API (mgmt_agent.py: the kernel asks user space to confirm even Just Works) and the
# kernel's debugfs (the keys it holds).
#   1. gatttool on hci1 discovers, reads, subscribes to and writes hwprobe serve mirror-v1 on hci0;
#   2. btmgmt pair from hci1 bonds with hwprobe serve --pairing required (Just Works, then Passkey
#      Entry), and gatttool reads values that need security, encrypted with that bond;
#   3. hwprobe pair on hci0 bonds with hci1 advertising through the kernel, by Secure Connections
#      and then by legacy pairing; both sides must hold the same keys, filed the same way;
#   4. hwprobe relay between hci2 (the kernel as the device) and hci1 (the kernel as the app)
#      (kernel-relay.sh).
# What the kernel did differently from bumble is in docs/testing.md §4.
# Needs bluez and bluez-test-tools (btmgmt, gatttool) on the host, whose root the VM shares.
K="${kernel%%/*}"; K="${K#hci}"  # the kernel's controller (from the peer's READY line)
KADDR="${kernel#*/}"
HADDR=A0:A0:A0:00:00:03         # hwprobe's (hci0: ble_peer.py's --vhci controller)
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
keys="/sys/kernel/debug/bluetooth/hci$K/long_term_keys"

# btmgmt ends with its standard input, before the kernel's reply (with /dev/null it printed
# nothing): give it one that stays open (a fifo held by this shell) and a deadline.
mkfifo "$work/mgmt.in"
exec 7<>"$work/mgmt.in"
mgmt() { timeout 20 btmgmt --index $K "$@" <&7; }
# agent NAME ARGS...: Tests/BenchVM/mgmt_agent.py answering the kernel's pairing prompts (as
# bluetoothd's agent would) and logging its pairing events to $work/NAME.agent until agent_stop.
agent() {
    local name="$1"; shift
    mkfifo "$work/$name.agent.in"
    exec 8<>"$work/$name.agent.in"
    "$PY" "$repo/Tests/BenchVM/mgmt_agent.py" $K "$@" <&8 >"$work/$name.agent" 2>&1 &
    agent_pid=$!
    agent_ready() { grep -q "^READY" "$work/$name.agent" || ! kill -0 "$agent_pid" 2>/dev/null; }
    wait_until 20 agent_ready
}
agent_stop() { exec 8>&-; kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null; }
# agent_events NAME EXPRESSION: EXPRESSION on the agent's JSON lines (j)
agent_events() { json_lines "$work/$1.agent" "$2"; }

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

# The kernel's controller, powered by the kernel's management API as bluetoothd would: LE only.
started=$(date +%s.%N)
mgmt bredr off >"$work/mgmt.log" 2>&1
mgmt le on >>"$work/mgmt.log" 2>&1
mgmt bondable on >>"$work/mgmt.log" 2>&1
mgmt sc on >>"$work/mgmt.log" 2>&1
mgmt power on >"$work/power.out" 2>&1
elapsed "btmgmt: hci$K LE only, powered" "$started"
# (its IO capability stays the kernel's default, NoInputNoOutput)
if grep -q "settings: powered bondable le secure-conn" "$work/power.out"; then
    pass "btmgmt powers hci$K on, LE only, bondable, Secure Connections ($(sed 's/^[[:space:]]*//' "$work/power.out"))"
else
    fail "btmgmt powers hci$K on, LE only, bondable, Secure Connections" "$(cat "$work/mgmt.log" "$work/power.out")"
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
# same_keys PEER: compares the kernel's long-term keys for PEER (debugfs: least significant octet
# first; type 1 the key it was given, 2 the key it gave, 3 a Secure Connections key) with the bond
# hwprobe keeps for the kernel's controller in $XDG_STATE_HOME (most significant first; centralKey
# the key the peer gave, peripheralKey the key hwprobe gave). Prints "same: KINDS" or the difference.
same_keys() { "$PY" - "$keys" "$1" "$XDG_STATE_HOME" "$KADDR" <<'PY' 2>&1
import glob, json, sys
debugfs, peer, state, identity = sys.argv[1:]
kernel = {}
for line in open(debugfs):
    f = line.split()
    if len(f) == 9 and f[0].upper() == peer:
        kernel[int(f[4], 16)] = (bytes.fromhex(f[8])[::-1].hex(), int(f[6], 16), f[7])
ours = {}
for path in glob.glob(state + "/hwprobe/bonds/*.json"):
    for bond in json.load(open(path))["bonds"]:
        if bond["identity"] == identity:
            for kind in ("centralKey", "peripheralKey"):
                if bond.get(kind):
                    ours[kind] = (bond[kind]["ltk"].lower(), bond[kind]["ediv"], bond[kind]["rand"].lower())
if 3 in kernel:   # Secure Connections: one key both ways
    want = {kind: kernel[3] for kind in ours}
else:             # legacy: the key the kernel gave is ours to encrypt with as central, and back
    want = {kind: kernel[t] for kind, t in (("centralKey", 2), ("peripheralKey", 1)) if t in kernel}
if ours and ours == want:
    print("same: " + ", ".join(f"{kind} (EDIV {v[1]:04x}, Rand {v[2]})" for kind, v in sorted(ours.items())))
else:
    print(f"different: hwprobe {ours}, kernel {kernel}")
PY
}

started=$(date +%s.%N)
export XDG_STATE_HOME="$work/state-jw"
hwprobe_serve jw "profile:$work/secure.json" --pairing required
agent jw
timeout 40 btmgmt --index $K pair -c 3 -t 2 "${advertised%/*}" <&7 >"$work/pair-jw.out" 2>&1
rc=$?
elapsed "btmgmt pair (Just Works) with hwprobe serve --pairing required" "$started"
paired="$(json_lines "$work/jw.json" '[[l.get("method"), l.get("secureConnections"), l.get("error")] for l in j if l["event"] == "paired"]')"
if [ $rc -eq 0 ] && grep -q "Paired with ${advertised%/*}" "$work/pair-jw.out" && [ "$paired" = '[["just-works", true, null]]' ]; then
    pass "btmgmt pair -c 3 (NoInputNoOutput): the kernel bonds with serve by LE Secure Connections Just Works ($(tr '\n' ' ' <"$work/pair-jw.out"); serve: $paired)"
else
    fail "btmgmt pair -c 3 (NoInputNoOutput) bonds with serve by Secure Connections Just Works" "exit $rc: $(cat "$work/pair-jw.out")" "serve: $paired" "$(tail -n 20 "$work/jw.json" "$work/jw.err")"
fi
same="$(same_keys "${advertised%/*}")"
case "$same" in
    same:*) pass "the kernel (debugfs long_term_keys) and serve's bond store hold the same LTK for each other ($same)" ;;
    *) fail "the kernel and serve's bond store hold the same LTK" "$same" ;;
esac
# 2A1F needs authentication, which a Just Works bond does not give: serve answers 0x05, BlueZ's ATT
# layer asks the kernel for an authenticated link, and the kernel, NoInputNoOutput, cannot pair
# for one (it sends Pairing Failed 0x03 itself and drops the link).
gatttool_client protected hci$K "$advertised" medium 2A6E=0a01 2A6F=3200 2A1F=unanswered
stop_serve
agent_stop
events="$(agent_events jw '[l["event"] + ("" if l["event"] != "new-ltk" else " %s %d %s" % (l["keyType"], l["store"], l["address"])) for l in j]')"
echo "# the kernel's mgmt events: $events" >&2
seen="$(json_lines "$work/jw.json" '[l["event"] + ("" if l["event"] != "encrypted" else " level %d" % l["level"]) + ("" if l["event"] != "paired" else " " + (l.get("error") or "ok")[:20]) for l in j if l["event"] in ("connected", "paired", "encrypted")]')"
if [ "$seen" = '["connected", "encrypted level 2", "paired ok", "connected", "encrypted level 2", "paired Pairing Failed: 0x03"]' ] \
    && [ "$(agent_events jw '[l["event"] + " " + l.get("status", "") for l in j if l["event"] == "auth-failed"]')" = '["auth-failed 0x05"]' ]; then
    pass "gatttool's link was encrypted with the bond (no pairing first), and the authenticated read ended in the kernel's Pairing Failed 0x03 ($seen)"
else
    fail "gatttool's link encrypted with the bond, the authenticated read refused by the kernel's own pairing" "$seen" "$(cat "$work/jw.json" "$work/jw.err" "$work/jw.agent")"
fi
elapsed "Just Works, both sides' keys, a protected read" "$started"

# 2b. Passkey Entry, both sides typing (KeyboardOnly on both: the core specification's Table 2.8):
#     the kernel asks user space for the passkey (the agent gives it), serve has it from --passkey.
#     The kernel forgets the Just Works bond first (btmgmt unpair), serve starts with no store.
started=$(date +%s.%N)
mgmt unpair -t 2 "${advertised%/*}" >"$work/unpair.out" 2>&1
export XDG_STATE_HOME="$work/state-passkey"
hwprobe_serve passkey "profile:$work/secure.json" --pairing required --io keyboard --passkey 314159
agent passkey --passkey 314159
timeout 40 btmgmt --index $K pair -c 2 -t 2 "${advertised%/*}" <&7 >"$work/pair-passkey.out" 2>&1
rc=$?
paired="$(json_lines "$work/passkey.json" '[[l.get("method"), l.get("secureConnections"), l.get("error")] for l in j if l["event"] == "paired"]')"
asked="$(agent_events passkey '[l["event"] + ("" if l["event"] != "new-ltk" else " authenticated=%s" % l["authenticated"]) for l in j if l["event"] in ("passkey-request", "user-confirm", "new-ltk")]')"
if [ $rc -eq 0 ] && grep -q "Paired with" "$work/pair-passkey.out" && [ "$paired" = '[["passkey", true, null]]' ] \
    && [ "$asked" = '["passkey-request", "new-ltk authenticated=True"]' ]; then
    pass "btmgmt pair -c 2 (KeyboardOnly): the kernel bonds with serve by Secure Connections Passkey Entry, authenticated (kernel: $asked; serve: $paired)"
else
    fail "btmgmt pair -c 2 (KeyboardOnly) bonds with serve by Passkey Entry" "exit $rc: $(cat "$work/pair-passkey.out")" "serve: $paired" "kernel: $asked" "$(tail -n 20 "$work/passkey.json" "$work/passkey.err")"
fi
gatttool_client protected hci$K "$advertised" high 2A1F=1234
stop_serve
agent_stop
same="$(same_keys "${advertised%/*}")"
case "$same" in
    same:*) pass "after Passkey Entry too, the kernel and serve hold the same LTK ($same)" ;;
    *) fail "after Passkey Entry, the kernel and serve hold the same LTK" "$same" ;;
esac
elapsed "Passkey Entry and an authenticated read" "$started"

# 3. hwprobe pair (hci0, central and initiator) with the kernel's controller advertising as a
#    connectable, bondable peripheral (the kernel the responder).
started=$(date +%s.%N)
export XDG_STATE_HOME="$work/state-central"
mgmt connectable on >"$work/adv.out" 2>&1
mgmt advertising on >>"$work/adv.out" 2>&1
agent central
"$HWPROBE" pair --hci hci:0 "$KADDR" --json >"$work/pair.json" 2>"$work/pair.err"
rc=$?
# (the kernel's New Long Term Key event may come a little after hwprobe is done)
new_ltk() { grep -q '"new-ltk"' "$work/$1.agent"; }
wait_until 5 new_ltk central
agent_stop
got="$(json "$work/pair.json" '[j["identity"], j["method"], j["secureConnections"], j["bonded"], j["keys"]]')"
events="$(agent_events central '[l["event"] + ("" if l["event"] != "new-ltk" else " %s store=%d" % (l["address"], l["store"])) for l in j if l["event"] in ("user-confirm", "new-ltk", "auth-failed")]')"
if [ $rc -eq 0 ] && [ "$got" = "[\"$KADDR\", \"just-works\", true, true, [\"ltk\"]]" ] && echo "$events" | grep -q "new-ltk $HADDR store=1"; then
    pass "hwprobe pair bonds with the kernel's advertising controller by Secure Connections Just Works (hwprobe: $got; kernel: $events)"
else
    fail "hwprobe pair bonds with the kernel's advertising controller" "exit $rc: $got" "kernel: $events" "$(cat "$work/pair.err" "$work/adv.out")"
fi
same="$(same_keys "$HADDR")"
case "$same" in
    same:*) pass "the kernel (debugfs) and hwprobe's bond store hold the same LTK for each other ($same)" ;;
    *) fail "the kernel and hwprobe's bond store hold the same LTK" "$same" ;;
esac
"$HWPROBE" bonds --json >"$work/bonds.json" 2>"$work/bonds.err"
listed="$(json "$work/bonds.json" '[[c["controller"], [b["identity"] for b in c["bonds"]]] for c in j["controllers"]]')"
if [ "$listed" = "[[\"$HADDR\", [\"$KADDR\"]]]" ]; then pass "hwprobe bonds lists the kernel's controller as hci0's bond ($listed)"
else fail "hwprobe bonds lists the kernel's controller" "$listed" "$(cat "$work/bonds.err")"; fi
elapsed "hwprobe pair with the kernel as peripheral" "$started"

# 4. The same by legacy pairing (hwprobe pair --legacy): two keys, one each way, each with its own
#    EDIV and Rand, which both sides must file under the right direction.
started=$(date +%s.%N)
mgmt unpair -t 1 "$HADDR" >"$work/unpair.out" 2>&1
export XDG_STATE_HOME="$work/state-legacy"
agent legacy
"$HWPROBE" pair --hci hci:0 "$KADDR" --legacy --json >"$work/legacy.json" 2>"$work/legacy.err"
rc=$?
wait_until 5 new_ltk legacy
agent_stop
got="$(json "$work/legacy.json" '[j["method"], j["secureConnections"], j["bonded"], j["keys"]]')"
events="$(agent_events legacy '["%s type %d" % (l["event"], l["keyType"]) for l in j if l["event"] == "new-ltk"]')"
same="$(same_keys "$HADDR")"
if [ $rc -eq 0 ] && [ "$(echo "$got" | cut -c1-29)" = '["just-works", false, true, [' ] && [ "${same%%:*}" = same ]; then
    pass "hwprobe pair --legacy bonds with the kernel by legacy Just Works, and both file each key under the same direction (hwprobe: $got; kernel: $events; $same)"
else
    fail "hwprobe pair --legacy bonds with the kernel, keys filed the same way" "exit $rc: $got" "kernel: $events" "$same" "$(cat "$work/legacy.err")"
fi
elapsed "legacy pairing with the kernel as peripheral" "$started"

# 5. (the header's 4.) hwprobe relay between two kernel-managed controllers (Tests/BenchVM/kernel-relay.sh).
. "$repo/Tests/BenchVM/kernel-relay.sh"
exec 7>&-
