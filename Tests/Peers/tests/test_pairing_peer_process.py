"""ble_peer.py as the test of hwprobe will run it: its own process, pairing options from the
command line, events and knobs through the control channel, and a host on controller A's TCP
port (here bumble's host with PairingCentral, where hwprobe will be).

One peer process serves the whole module (starting one costs about a second).
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.dirname(HERE)
sys.path.insert(0, PEERS)

from bumble import crypto, hci  # noqa: E402
from bumble.device import Device  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

import ble_peer  # noqa: E402
from peerkit.pairing import PairingFault, PairingOptions  # noqa: E402
from peerkit.pairing_central import PairingCentral  # noqa: E402
from peerkit.secure_profile import AUTHENTICATED_SC_UUID, AUTHENTICATED_SC_VALUE  # noqa: E402

PASSKEY = "024680"


@pytest.fixture(scope="module")
def peer():
    process = subprocess.Popen(
        [sys.executable, os.path.join(PEERS, "ble_peer.py"), "--profile", "secure", "--io", "display",
         "--passkey", PASSKEY, "--mitm", "--sc-only", "--adv-interval-ms", "20"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("READY "), line
        fields = dict(item.split("=", 1) for item in line.split()[1:])
        yield fields
    finally:
        process.stdin.close()  # the peer stops when stdin closes
        try:
            assert process.wait(5) == 0
        except subprocess.TimeoutExpired:
            process.kill()
            raise


def control(fields: dict, **request) -> dict:
    host, port = fields["control"].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(sock.makefile().readline())
    assert answer.get("ok"), answer
    return answer


async def open_central(fields: dict, options: PairingOptions):
    transport = await open_transport(f"tcp-client:{fields['tcp']}")
    device = Device.with_hci("central", hci.Address("F0:F0:F0:00:00:01"), transport.source, transport.sink)
    central = PairingCentral(device, options)
    await device.power_on()
    return transport, central


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 20))


def test_pairs_then_reconnects_with_an_encryption_and_no_pairing(peer):
    mark = control(peer, cmd="events")["next"]

    async def body():
        transport, central = await open_central(peer, PairingOptions(io="keyboard", passkey=int(PASSKEY)))
        try:
            await central.connect(peer["address"])
            first = await central.read(AUTHENTICATED_SC_UUID)
            assert first["attErrors"] == [0x05] and first["secured"]["method"] == "passkey-entry"
            assert first["value"] == AUTHENTICATED_SC_VALUE.hex()
            await central.disconnect()
            control(peer, cmd="events", since=mark, wait="disconnected")
            await central.connect(peer["address"])
            second = await central.read(AUTHENTICATED_SC_UUID)
            assert second["attErrors"] == [0x0F] and second["secured"]["cause"] == "bond"
            assert second["value"] == AUTHENTICATED_SC_VALUE.hex()
            return first["secured"]["seconds"]
        finally:
            await transport.close()

    pairing_seconds = run(body())
    events = control(peer, cmd="events", since=mark)["events"]
    names = [e["event"] for e in events]
    assert names.count("pairing_started") == 1 and names.count("paired") == 1 and names.count("bonded") == 1
    changes = [e for e in events if e["event"] == "encryption_changed"]
    assert [c["cause"] for c in changes] == ["pairing", "bond"]
    assert changes[1]["pairing"] is False and changes[1]["authenticated"] and changes[1]["sc"]
    assert [e["passkey"] for e in events if e["event"] == "passkey_displayed"] == [PASSKEY]
    state = control(peer, cmd="state")
    assert state["pairing"]["encryptionsWithoutPairing"] >= 1 and state["pairing"]["irkNonZero"]
    bonds = control(peer, cmd="bonds")["bonds"]
    assert bonds and bonds[0]["identity"] == "A0:A0:A0:00:00:01" and "values" not in bonds[0]
    print(f"pairing (SC passkey, both bumble, over controller A's TCP): {pairing_seconds * 1000:.0f} ms")


def test_control_channel_faults_options_and_event_stream(peer):
    host, port = peer["control"].rsplit(":", 1)
    stream = socket.create_connection((host, int(port)), timeout=10)
    reader = stream.makefile()
    stream.sendall(b'{"cmd": "subscribe"}\n')
    assert json.loads(reader.readline())["ok"]
    control(peer, cmd="bonds", remove="all")
    control(peer, cmd="pairing", sc="allowed", mitm=False, smpTimeout=5)
    faults = control(peer, cmd="pairing_fault", fault="silent", at="public_key")["faults"]
    assert faults[-1] == {"fault": "silent", "at": "public_key", "nth": 1, "reason": None, "fired": False}

    async def body():
        transport, central = await open_central(peer, PairingOptions(smp_timeout=0.3))
        try:
            await central.connect(peer["address"])
            return await central.pair()
        finally:
            await transport.close()

    result = run(body())
    assert result["paired"] is False and result["reasonName"] == "SMP timeout"
    streamed = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "fault" not in [e["event"] for e in streamed]:
        streamed.append(json.loads(reader.readline()))
    assert [e["event"] for e in streamed][:3] == ["connected", "pairing_started", "method"]
    assert streamed[-1]["fault"] == "silent" and streamed[-1]["at"] == "public_key"
    stream.close()
    assert control(peer, cmd="pairing_fault", fault="clear")["faults"] == []
    answer = control(peer, cmd="pairing", sc="only", mitm=True, smpTimeout=30)
    assert answer["pairing"]["options"]["sc"] == "only"


def test_command_line_options_reach_the_agent():
    args = ble_peer.parse_args(["--io", "keyboard-display", "--legacy", "--no-bonding", "--passkey", "000000",
                                "--compare", "no", "--smp-timeout", "2.5", "--pairing-fault", "drop-link@random#2:0x13",
                                "--pairing-fault", "off-curve-key"])
    options = ble_peer.pairing_options(args)
    assert (options.io, options.sc, options.bonding, options.passkey, options.compare, options.smp_timeout) == \
        ("keyboard-display", "off", False, 0, "no", 2.5)
    assert [f.describe() for f in args.pairing_fault] == [
        {"fault": "drop_link", "at": "random", "nth": 2, "reason": 0x13, "fired": False},
        {"fault": "off_curve_key", "at": "public_key", "nth": 1, "reason": None, "fired": False}]
    with pytest.raises(ValueError):
        PairingFault.parse_text("silent@nowhere")
    with pytest.raises(SystemExit):
        ble_peer.parse_args(["--passkey", "1000000"])


# -- controller A answers the crypto commands stock bumble leaves unanswered -----------------
class H4:
    def __init__(self, address: str):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=5)

    def command(self, op_code: int, parameters: bytes = b"") -> None:
        self.sock.sendall(struct.pack("<BHB", 1, op_code, len(parameters)) + parameters)

    def event(self) -> tuple[int, bytes]:
        header = self._exactly(3)
        assert header[0] == 0x04, header
        return header[1], self._exactly(header[2])

    def _exactly(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            assert chunk, "controller A closed the stream"
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()


def test_controller_a_le_encrypt_p256_and_dhkey(peer):
    h4 = H4(peer["tcp"])
    try:
        # LE Encrypt: FIPS-197 Appendix C.1 (AES-128), most significant octet last as HCI carries it
        key = bytes.fromhex("000102030405060708090a0b0c0d0e0f")[::-1]
        plaintext = bytes.fromhex("00112233445566778899aabbccddeeff")[::-1]
        h4.command(0x2017, key + plaintext)
        code, parameters = h4.event()
        assert code == 0x0E and parameters[1:3] == b"\x17\x20" and parameters[3] == 0
        assert parameters[4:20][::-1].hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"

        h4.command(0x2025)
        code, parameters = h4.event()
        assert code == 0x0F and parameters[0] == 0  # Command Status, success
        code, parameters = h4.event()
        assert code == 0x3E and parameters[:2] == b"\x08\x00" and len(parameters) == 66
        controller_x, controller_y = parameters[2:34], parameters[34:66]

        ours = crypto.EccKey.generate()
        h4.command(0x2026, ours.x[::-1] + ours.y[::-1])
        assert h4.event()[0] == 0x0F
        code, parameters = h4.event()
        assert code == 0x3E and parameters[:2] == b"\x09\x00"
        assert parameters[2:34] == ours.dh(controller_x[::-1], controller_y[::-1])[::-1]

        off_curve_y = ((int.from_bytes(ours.y, "big") + 1) % 2**256).to_bytes(32, "big")
        h4.command(0x2026, ours.x[::-1] + off_curve_y[::-1])
        assert h4.event()[0] == 0x0F
        code, parameters = h4.event()
        assert code == 0x3E and parameters[:2] == b"\x09\x12"  # Invalid HCI Command Parameters
    finally:
        h4.close()
