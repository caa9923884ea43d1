"""`hwprobe pair` at a terminal against bumble's pairing peer (Tests/Peers/ble_peer.py, a
secure profile wanting authenticated Secure Connections): the passkey the peer shows is typed
(right: bonded; wrong: 0x04, exit 1), Esc or Ctrl-C cancels (0x08; exit 1, or 130 for Ctrl-C), and a numeric comparison is
answered y (bonded) or n (0x0C, exit 1). The peer's own events say what it saw; the terminal's
modes are as they were afterwards every time."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from terminal import REPO, assert_sane_modes, base_environment

PASSKEY = "024680"


class Peer:
    """ble_peer.py in its own process (stopped when its stdin closes)."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, str(REPO / "Tests" / "Peers" / "ble_peer.py"), "--profile", "secure", "--mitm", "--sc-only",
             "--adv-interval-ms", "20", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline().strip()
        assert line.startswith("READY "), line
        self.fields = dict(item.split("=", 1) for item in line.split()[1:])

    def control(self, **request) -> dict:
        host, port = self.fields["control"].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(json.dumps(request).encode() + b"\n")
            answer = json.loads(sock.makefile().readline())
        assert answer.get("ok"), answer
        return answer

    def events(self) -> list[dict]:
        return self.control(cmd="events")["events"]

    def wait_for_event(self, name: str, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [e for e in self.events() if e["event"] == name]
            if found:
                return found[-1]
            time.sleep(0.05)
        raise AssertionError(f"the peer reported no {name}: {self.events()}")

    def stop(self):
        self.process.stdin.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def state():
    with tempfile.TemporaryDirectory(prefix="pair-prompts-") as directory:
        yield directory


def start(run, peer: Peer, state: str):
    env = base_environment(XDG_STATE_HOME=state)
    return run(["pair", "--hci", "tcp:" + peer.fields["tcp"], peer.fields["address"]], cols=110, rows=20, env=env, shell=True)


def stored(state: str) -> list[str]:
    bonds = os.path.join(state, "hwprobe", "bonds")
    return sorted(os.listdir(bonds)) if os.path.isdir(bonds) else []


@pytest.mark.parametrize("typed, code, said", [(PASSKEY, 0, "paired with"), ("135791", 1, "0x04 Confirm Value Failed")])
def test_the_passkey_the_peer_shows_is_typed_at_the_prompt(run, state, typed, code, said):
    peer = Peer("--io", "display", "--passkey", PASSKEY)
    try:
        t = start(run, peer, state)
        t.wait_for("type the passkey the device shows", timeout=20)
        t.wait_for("passkey: ______", timeout=5)
        # A slip corrected with Backspace: what is sent is what the screen shows at Enter.
        t.type(typed[:3] + "9").press("backspace")
        t.wait_for(f"passkey: {typed[:3]}___", timeout=5)
        t.type(typed[3:]).press("enter")
        exit_code, modes = t.finish(timeout=40)
        assert exit_code == code, t.dump()
        assert said in t.text(), t.dump()
        assert_sane_modes(modes, t.modes_before)
        names = [e["event"] for e in peer.events()]
        if code == 0:
            assert "paired" in names and "bonded" in names, names
            assert len(stored(state)) == 1
        else:
            assert "paired" not in names and stored(state) == [], (names, stored(state))
    finally:
        peer.stop()


@pytest.mark.parametrize("key, code", [("esc", 1), ("ctrl-c", 130)])
def test_esc_or_ctrl_c_at_the_prompt_cancels_with_unspecified_reason_and_stores_nothing(run, state, key, code):
    peer = Peer("--io", "display", "--passkey", PASSKEY)
    try:
        t = start(run, peer, state)
        t.wait_for("passkey: ______", timeout=20)
        t.type("12").press(key)
        exit_code, modes = t.finish(timeout=40)
        assert exit_code == code, t.dump()
        assert "0x08 Unspecified Reason" in t.text() and "cancelled" in t.text(), t.dump()
        assert_sane_modes(modes, t.modes_before)
        assert stored(state) == []
        failures = [e for e in peer.events() if e["event"] == "pairing_failed"]
        assert failures and failures[-1].get("reason") == 0x08, peer.events()
    finally:
        peer.stop()


@pytest.mark.parametrize("answer, code, said", [("y", 0, "paired with"), ("n", 1, "0x0C Numeric Comparison Failed")])
def test_a_numeric_comparison_is_answered_yes_or_no(run, state, answer, code, said):
    peer = Peer("--io", "display-yes-no", "--compare", "yes")
    try:
        t = start(run, peer, state)
        t.wait_for("does the device show", timeout=20)
        t.wait_for("y  yes, the same number", timeout=5)
        shown = peer.wait_for_event("numeric_comparison")
        t.press("enter")  # no default answer
        t.press(answer)
        exit_code, modes = t.finish(timeout=40)
        assert exit_code == code, t.dump()
        assert said in t.text(), t.dump()
        # Both sides showed the same six digits (the peer's from its own g2).
        assert f"does the device show {shown['value']}?" in t.text(), (shown, t.dump())
        assert_sane_modes(modes, t.modes_before)
        assert len(stored(state)) == (1 if code == 0 else 0)
    finally:
        peer.stop()
