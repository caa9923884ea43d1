#!/bin/sh
# exploration
. "$(dirname "$0")/../guest-lib.sh"
mkfifo "$work/link.in"
exec 5<>"$work/link.in"
started=$(date +%s.%N)
"$PEER_PY" "$repo/Tests/Peers/vhci_link.py" --count 2 -v <&5 >"$work/link.out" 2>"$work/link.err" &
link=$!
ready() { grep -q "^READY" "$work/link.out" || ! kill -0 "$link" 2>/dev/null; }
wait_until 200 ready
elapsed "link ready" "$started"
cat "$work/link.out" "$work/link.err"
btmgmt --index 1 info
btmgmt --index 1 le on
btmgmt --index 1 bredr off
btmgmt --index 1 power on
btmgmt --index 1 info
hciconfig -a
"$HWPROBE" serve --hci hci:0 mirror-v1 --json --seconds 60 >"$work/serve.out" 2>"$work/serve.err" &
serve=$!
sleep 4
cat "$work/serve.out" "$work/serve.err"
timeout 30 gatttool -i hci1 -b C0:FF:EE:00:4F:2A -t random --primary
timeout 30 gatttool -i hci1 -b C0:FF:EE:00:4F:2A -t random --characteristics
timeout 30 gatttool -i hci1 -b C0:FF:EE:00:4F:2A -t random --char-desc
timeout 30 gatttool -i hci1 -b C0:FF:EE:00:4F:2A -t random --char-read -u 7B9E0002-3C2A-4F1B-9E6D-5A4C3B2A1F00
cat "$work/serve.out" "$work/serve.err"
kill $serve; kill $link
finish
