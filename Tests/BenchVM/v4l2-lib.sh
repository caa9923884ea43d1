# Sourced (after guest-lib.sh) by the V4L2 groups: vivid's HDMI loop, the feeder, and the checks
# every vivid camera gets, single- or multi-planar.
FIXTURES="${FIXTURES:-$repo/.build/bench-vm/fixtures}"
[ -s "$FIXTURES/codes.y4m" ] || { fail "fixtures in $FIXTURES (made by bench-vm-fixtures)"; finish; }
FEEDER="$repo/Tests/BenchVM/v4l2_feeder.py"

# hdmi_loop IN OUT: both HDMI ends at 640x480p60 (DV timings index of that size) and the loop on,
# so frames written to OUT come back on IN. Ends the group when it cannot.
hdmi_loop() {
    index="$(v4l2-ctl -d "$1" --list-dv-timings | awk '$1 == "Index:" { i = $2 }
        $1 == "Active" && $2 == "width:" { w = $3 } $1 == "Active" && $2 == "height:" && w == 640 && $3 == 480 { print i; exit }')"
    if v4l2-ctl -d "$1" --set-dv-bt-timings "index=$index" >/dev/null && v4l2-ctl -d "$2" --set-dv-bt-timings "index=$index" >/dev/null \
        && v4l2-ctl -d "$1" --set-ctrl loop_video=1; then
        pass "vivid: HDMI in ($1) and out ($2) at 640x480 (DV timings index $index), loop_video on"
    else
        fail "vivid: HDMI in ($1) and out ($2) at 640x480, loop_video on"; finish
    fi
}

# list_matches_v4l2_ctl NODE: `hwprobe list --json` (in $work/list.json, exit status $rc) shows
# /dev/NODE as vivid with the formats v4l2-ctl lists.
list_matches_v4l2_ctl() {
    ours="$(json "$work/list.json" "sorted(f['fourcc'].strip() for c in j['cameras'] if c['uri'] == 'v4l2:/dev/$1' for f in c['formats'])")"
    # v4l2-ctl's names, written the way hwprobe writes them (padding dropped: 'Y16 -BE' is Y16-BE)
    theirs="$(v4l2-ctl -d "/dev/$1" --list-formats | sed -n "s/.*\]: '\([^']*\)'.*/\1/p" | sed 's/ *-BE$/-BE/; s/ *$//' | sort \
        | "$PY" -c 'import json,sys; print(json.dumps(sorted(l.strip() for l in sys.stdin)))')"
    card="$(json "$work/list.json" "[(c['card'], c['driver']) for c in j['cameras'] if c['uri'] == 'v4l2:/dev/$1']")"
    if [ "$rc" -eq 0 ] && [ "$ours" = "$theirs" ] && [ "$card" = '[["vivid", "vivid"]]' ]; then
        pass "hwprobe list: v4l2:/dev/$1 is vivid with the same $(echo "$ours" | tr ',' '\n' | wc -l) formats v4l2-ctl lists"
    else
        fail "hwprobe list: v4l2:/dev/$1 is vivid with the formats v4l2-ctl lists" "exit $rc; card $card" "ours:   $ours" "theirs: $theirs"
    fi
}

# start_feeder OUT [FEEDER ARGS…]: shows the backup's codes on OUT; fails when it never starts.
start_feeder() {
    local out="$1"; shift
    "$PY" "$FEEDER" "$out" "$FIXTURES/codes.y4m" "$@" >"$work/feed.out" 2>&1 &
    feeder=$!
    feeding() { grep -q "^FEEDING" "$work/feed.out" || ! kill -0 "$feeder" 2>/dev/null; }
    wait_until 30 feeding
    grep -q "^FEEDING" "$work/feed.out"
}
stop_feeder() { kill "$feeder" 2>/dev/null; wait "$feeder" 2>/dev/null; }

# imports_through_loop IN OUT WHAT [FEEDER ARGS…]: `hwprobe import --camera v4l2:IN` imports and
# decrypts the backup the feeder cycles through on OUT (the blank frame and the four codes).
imports_through_loop() {
    local in="$1" out="$2" what="$3"; shift 3
    if start_feeder "$out" --repeat 12 "$@"; then
        started=$(date +%s.%N)
        timeout 120 "$HWPROBE" import --camera "v4l2:$in" --password-file "$FIXTURES/password" \
            --out "$work/vault.json" --json >"$work/import.json" 2>"$work/import.err"
        rc=$?
        elapsed "hwprobe import --camera v4l2:$in ($what)" "$started"
        got="$(json "$work/import.json" '[j.get("codes"), j.get("bytes")]')"
        if [ $rc -eq 0 ] && [ "$got" = "[4, $(wc -c < "$FIXTURES/plaintext")]" ] && cmp -s "$work/vault.json" "$FIXTURES/plaintext"; then
            pass "hwprobe import --camera v4l2:$in imports and decrypts the backup shown through vivid ($what)"
        else
            fail "hwprobe import --camera v4l2:$in imports and decrypts the backup ($what)" "exit $rc; $got" "$(cat "$work/import.json")" \
                "$(tail -n 15 "$work/import.err")" "$(cat "$work/feed.out")"
        fi
        stop_feeder
        rm -f "$work/vault.json"
    else
        fail "the feeder streams to vivid's output $out ($what)" "$(cat "$work/feed.out")"
    fi
}
