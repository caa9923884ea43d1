# Sourced by kernel-peer.sh (its helpers and btmgmt's fifo on fd 7), with ble_peer.py's link still
# up: hwprobe relay between two kernel-managed controllers (issue 31, item 4).
#   DEVICE: the second kernel controller ($device), advertising connectable through btmgmt, with a
#           Heart Rate-like GATT server on the kernel's own ATT channel (att_server.py: Debian's
#           bluez-test-tools has no btgatt-server);
#   RELAY:  hwprobe relay --to the peer's TCP controller (toward the device) --hci hci:0 (toward the
#           app), --record;
#   APP:    gatttool on the first kernel controller (hci$K) connecting to hci0's address: discovers,
#           reads, writes the CCCD and gets the device's notifications through the relay;
#   then serve replay: of the recording answers gatttool the same read.
D="${device%%/*}"; D="${D#hci}"
DADDR="${device#*/}"
TCP="$(sed -n 's/.* tcp=\([^ ]*\).*/\1/p' "$work/peer.out")"
started=$(date +%s.%N)
mgmt unpair -t 1 "$HADDR" >"$work/relay-unpair.out" 2>&1   # sections 3-4's bond: the app starts with none
# hci$K still advertises from section 3: as the app it is a central only (with it advertising, its
# connection to the relay never came: "Host is down" after the kernel's connection timeout).
mgmt advertising off >>"$work/relay-unpair.out" 2>&1
mgmt connectable off >>"$work/relay-unpair.out" 2>&1
for setting in "bredr off" "le on" "connectable on" "advertising on" "power on"; do
    timeout 20 btmgmt --index "$D" $setting <&7 >>"$work/relay-mgmt.log" 2>&1
done
"$PY" "$repo/Tests/BenchVM/att_server.py" "$DADDR" 60 >"$work/att.out" 2>&1 &
att=$!
att_ready() { grep -q "^READY" "$work/att.out" || ! kill -0 "$att" 2>/dev/null; }
wait_until 10 att_ready
# The kernel advertises by extended advertising (its controller has the feature): the relay copies
# that form by default, and the kernel's central connects to it.
"$HWPROBE" relay --hci hci:0 --to "tcp:$TCP" "$DADDR" --record "$work/relay.cassette" --json --seconds 60 \
    >"$work/relay.json" 2>"$work/relay.err" &
relay=$!
relay_advertising() { grep -q '"event":"advertising"' "$work/relay.json" || ! kill -0 "$relay" 2>/dev/null; }
if wait_until 30 relay_advertising && kill -0 "$relay" 2>/dev/null; then
    pass "hwprobe relay finds hci$D (the kernel advertising, btmgmt) through tcp:$TCP, reads its database and advertises on hci0"
    gatttool_client heart-rate "hci$K" "$HADDR"
else
    fail "hwprobe relay finds the kernel's advertising controller hci$D and advertises on hci0" "$(cat "$work/relay-mgmt.log" "$work/relay.json" "$work/relay.err" "$work/att.out")"
fi
kill -INT "$relay" 2>/dev/null
wait "$relay" 2>/dev/null
elapsed "hwprobe relay between two kernel controllers, gatttool through it" "$started"
device_side="$(grep -c '^notified' "$work/att.out") $(grep -c '^subscribed' "$work/att.out")"
seen="$(json_lines "$work/relay.json" 'sorted((l.get("side") or "?") + " " + l["event"] + ("" if l["event"] != "connected" else " " + str(l.get("central") or l.get("address") or l.get("error"))) for l in j if l["event"] in ("connected", "subscribed", "notified"))')"
want="[\"app connected $KADDR\", \"app notified\", \"app notified\", \"app notified\", \"app subscribed\", \"device connected $DADDR\"]"  # sorted
if [ "$device_side" = "3 1" ] && [ "$(echo "$seen" | tr -d ' ')" = "$(echo "$want" | tr -d ' ')" ]; then
    pass "the kernel's device saw the relay subscribe and sent 3 notifications; the relay connected both kernels and forwarded them ($seen)"
else
    fail "the relay connected the kernel's device and app and forwarded the CCCD write and 3 notifications" \
        "device side (notified, subscribed): $device_side" "relay: $seen" "$(cat "$work/att.out")" "$(tail -n 30 "$work/relay.json" "$work/relay.err")"
fi

# The recording, served to the kernel's app again with the device gone.
kill "$att" 2>/dev/null
wait "$att" 2>/dev/null
started=$(date +%s.%N)
if [ -s "$work/relay.cassette" ]; then
    hwprobe_serve replay "replay:$work/relay.cassette"
    gatttool_client protected "hci$K" "$advertised" low 2a38=01
    stop_serve
else
    fail "relay --record wrote a cassette" "$(tail -n 20 "$work/relay.err")"
fi
elapsed "serve replay: of the relay's recording, gatttool's read" "$started"
