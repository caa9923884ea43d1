"""`hwprobe serve` at a terminal, met by bumble's central (Tests/Peers/central_peer.py): the one
screen shows what it advertises, then the central with its MTU and subscriptions, and the
device's state; its keys act on the served mirror (the central hears it); `q` ends it with
exit 0 and the terminal's modes as they were."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time

import pytest

from terminal import REPO, assert_sane_modes, base_environment

STATE = "7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00"


class Central:
    """central_peer.py in its own process: one READY line with its ports, JSON commands on its
    control port, and it stops when its stdin closes."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, str(REPO / "Tests" / "Peers" / "central_peer.py"), "--hosts", "1"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        buffer = b""
        line = None
        while line is None and time.monotonic() < deadline:
            readable, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                break
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError("the central exited before it was ready")
            buffer += chunk
            line = next((l for l in buffer.decode().splitlines() if l.startswith("READY ")), None)
        if line is None:
            raise RuntimeError("the central did not print READY within 30 s")
        fields = dict(part.split("=", 1) for part in line.split()[1:])
        self.tcp = "tcp:" + fields["tcp"]
        host, port = fields["control"].rsplit(":", 1)
        self.control = (host, int(port))

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

    def stop(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def central():
    started = Central()
    yield started
    started.stop()


def test_the_screen_follows_the_central_and_the_keys_act_on_the_mirror(run, central):
    env = base_environment(HWPROBE_SIM_SPEED="10")
    t = run(["serve", "--hci", central.tcp, "mirror-v1?advertising=extended"], cols=100, rows=30, env=env, shell=True)
    t.wait_for("advertising C0:FF:EE:00:4F:2A (extended)", timeout=20)
    t.wait_for("s step on/off", timeout=5)
    central.command(cmd="connect", address="C0:FF:EE:00:4F:2A/random")
    central.command(cmd="mtu", mtu=247)
    central.command(cmd="discover")
    central.command(cmd="subscribe", uuid=STATE)
    t.wait_for("central     C0:C0:C0:00:00:01 · MTU 247", timeout=10)
    t.wait_for(f"0x0012 {STATE} (notifications)", timeout=10)
    # `b`: the battery runs low, on the screen; `3`: the scan stops with error 3, which the
    # central is notified of.
    t.press("b")
    t.wait_for("battery 5 %", timeout=5)
    t.press("3")
    t.wait_for("error 3", timeout=5)
    values = central.command(cmd="values", uuid=STATE, count=1, timeout=5)["values"]
    assert values[-1] == "070003", values
    central.command(cmd="disconnect")
    t.wait_for("disconnected reason 0x13", timeout=10)
    t.wait_for("advertising C0:FF:EE:00:4F:2A (extended)", timeout=10)
    t.press("q")
    code, modes = t.finish(timeout=20)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)
