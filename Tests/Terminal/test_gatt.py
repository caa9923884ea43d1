"""`hwprobe gatt --subscribe` at the terminal against a bumble peer (Tests/Peers/ble_peer.py):
values printed as they arrive, then Ctrl-C, which ends the subscription like a limit (exit 0)
and still prints what came, with the terminal's modes as they were."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from terminal import REPO, assert_sane_modes

NOTIFY = "A5C30006-6B1E-4F2A-9D3C-2B7E5F10C4A9"  # the generic profile's notify characteristic
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Peer:
    """ble_peer.py in its own process, as Tests/PeerSupport/PeerProcess.swift starts it: it prints
    one READY line with its ports, takes JSON commands on its control port, and stops when its
    stdin closes."""

    def __init__(self, *arguments: str):
        self.process = subprocess.Popen([sys.executable, str(REPO / "Tests" / "Peers" / "ble_peer.py"), *arguments],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = self._ready_line(deadline=time.monotonic() + 30)
        fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
        self.tcp = "tcp:" + fields["tcp"]
        self.address = fields["address"]
        host, port = fields["control"].rsplit(":", 1)
        self.control = (host, int(port))

    def _ready_line(self, deadline: float) -> str:
        buffer = b""
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                break
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError("the peer exited before it was ready")
            buffer += chunk
            for line in buffer.decode("utf-8", "replace").splitlines():
                if line.startswith("READY "):
                    return line
        raise RuntimeError("the peer did not print READY within 30 s")

    def command(self, **request) -> dict:
        with socket.create_connection(self.control, timeout=30) as connection:
            connection.sendall(json.dumps(request).encode() + b"\n")
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                answer += chunk
        result = json.loads(answer)
        assert result.get("ok"), result
        return result

    def wait_until_idle(self, timeout: float = 10.0):
        """A link left over from the previous test would keep the peripheral from advertising."""
        deadline = time.monotonic() + timeout
        while self.command(cmd="state")["connected"]:
            if time.monotonic() > deadline:
                raise AssertionError("the peer is still connected to an earlier host")
            time.sleep(0.05)  # polling another process's state

    def stop(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def peer():
    started = Peer()
    yield started
    started.stop()


@pytest.fixture
def idle_peer(peer):
    peer.wait_until_idle()
    yield peer
    peer.wait_until_idle()


def notification(sequence: int, size: int = 20) -> str:
    """The generic peer's notify payload: a u32 sequence number, then bytes 4, 5, …"""
    return (sequence.to_bytes(4, "little") + bytes(range(4, size))).hex()


def value_lines(t) -> list[str]:
    return [line for line in t.lines() if re.match(r"^\d+\.\d{3}  \d+  [0-9a-f]+$", line)]


def test_ctrl_c_ends_a_subscription_with_what_came_and_exit_zero(run, idle_peer):
    t = run(["gatt", "--hci", idle_peer.tcp, idle_peer.address + "/public", "--subscribe", NOTIFY], cols=120, rows=40, shell=True)
    # The CCCD write has been answered once hwprobe says it is receiving; the status line counts.
    t.wait_for(re.compile(r"receiving notifications from A5C30006… \(handle \d+\): 0 · Ctrl-C stops"), timeout=30)
    idle_peer.command(cmd="notify", count=5, size=20)
    t.wait_for(lambda t: len(value_lines(t)) == 5, timeout=20)
    t.press("ctrl-c")
    code, modes = t.finish(timeout=20)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)
    lines = value_lines(t)
    assert [line.split("  ")[2] for line in lines] == [notification(i) for i in range(5)], t.dump()
    handles = {line.split("  ")[1] for line in lines}
    assert len(handles) == 1, "every line names the value handle"
    seconds = [float(line.split("  ")[0]) for line in lines]
    assert seconds == sorted(seconds)
    # The summary takes the line where the terminal echoed ^C.
    assert re.search(r"^received 5 notifications in \d+\.\d s \(Ctrl-C\)$", t.text(), re.M), t.dump()
    assert "Ctrl-C stops" not in t.text(), "the status line is gone once nothing is waited for"


def test_ctrl_c_with_json_still_prints_the_object(run, idle_peer):
    # With --json and neither limit the subscription would last 10 s; Ctrl-C comes first.
    t = run(["gatt", "--hci", idle_peer.tcp, idle_peer.address + "/public", "--subscribe", NOTIFY, "--json"], cols=120, rows=40, shell=True)
    # Neither --count nor --seconds: the 10 s the contract gives a --json subscription.
    t.wait_for(re.compile(r"receiving notifications from .*: 0, (10|9) s left · Ctrl-C stops"), timeout=30)
    idle_peer.command(cmd="notify", count=3, size=20)
    t.wait_for(re.compile(r"receiving notifications from .*: 3, \d+ s left"), timeout=20)
    t.press("ctrl-c")
    code, modes = t.finish(timeout=20)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)
    text = ANSI.sub("", t.output.decode("utf-8", "replace").replace("\r", ""))
    found = re.search(r"^\{$.*?^\}$", text, re.S | re.M)
    assert found, text[-3000:]
    report = json.loads(found.group(0))
    subscription = report["subscription"]
    assert subscription["uuid"] == NOTIFY
    assert subscription["received"] == 3
    assert [v["value"] for v in subscription["values"]] == [notification(i) for i in range(3)]
    assert all(0 <= v["t"] < 10 for v in subscription["values"])
    assert report["address"] == idle_peer.address
    assert "received 3 notifications" in text
