#!/usr/bin/env python3
"""Proves the BLE peer works without our Swift code: bumble's own host is the client.

Starts ble_peer.py (three instances: default, --legacy-reports --random, --extended),
then over the H4 TCP port: scan, connect with a *public* own address (the LocalLink fix),
MTU exchange, discover all (compared with the peer's `database` command), read short and
long values, writes, notifications (2000 through the `notify` command) and indications,
Read Not Permitted, peer-initiated disconnect, reconnect after the TCP client vanished
mid-connection (power-cycle workaround), HCI_Reset while connected (reset workaround),
blackhole, and the raw host-side knobs (garbage_h4, mute_controller, report types).

Prints bumble-host timings (the figures our stack is compared with) and exits 0 on success.
Run with the peers' venv: `$(scripts/setup-peers) Tests/Peers/selftest.py`.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bumble import hci  # noqa: E402
from bumble.core import AdvertisingData  # noqa: E402
from bumble.device import Device, Peer  # noqa: E402
from bumble.gatt import GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

from peerkit.gattjson import property_names, uuid_text  # noqa: E402
from peerkit.profiles import (  # noqa: E402
    GENERIC_BASE, GENERIC_LONG_VALUE, GENERIC_MANUFACTURER, GENERIC_NAME, GENERIC_SHORT_VALUE,
    GENERIC_USER_DESCRIPTION,
)

TIMINGS: list[tuple[str, str]] = []
CHECKS = 0


def check(condition, what: str) -> None:
    global CHECKS
    if not condition:
        raise AssertionError(what)
    CHECKS += 1


def timing(name: str, value: str) -> None:
    TIMINGS.append((name, value))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def char_uuid(n: int) -> str:
    return GENERIC_BASE.format(n)


# ---------------------------------------------------------------------------------------
class PeerProcess:
    def __init__(self, *args: str):
        self.args = args

    async def __aenter__(self):
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, os.path.join(HERE, "ble_peer.py"), *self.args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 20)).decode().strip()
        check(line.startswith("READY "), f"READY line, got {line!r}")
        self.fields = dict(item.split("=", 1) for item in line.split()[1:])
        self.tcp = self.fields["tcp"]
        self.address = self.fields["address"]
        host, port = self.fields["control"].rsplit(":", 1)
        self.control_reader, self.control_writer = await asyncio.open_connection(host, int(port))
        return self

    async def control(self, **request) -> dict:
        self.control_writer.write(json.dumps(request).encode() + b"\n")
        await self.control_writer.drain()
        answer = json.loads(await asyncio.wait_for(self.control_reader.readline(), 60))
        return answer

    async def ok(self, **request) -> dict:
        answer = await self.control(**request)
        check(answer.get("ok"), f"control {request} -> {answer}")
        return answer

    async def __aexit__(self, *exc):
        self.control_writer.close()
        self.proc.stdin.close()  # the peer stops when stdin closes
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except asyncio.TimeoutError:
            self.proc.terminate()
            await self.proc.wait()
        check(self.proc.returncode == 0, f"peer exit code {self.proc.returncode}")


async def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        result = await predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def open_client(peer: PeerProcess):
    transport = await open_transport(f"tcp-client:{peer.tcp}")
    device = Device.with_hci("selftest", hci.Address("F0:F0:F0:F0:F0:F0"), transport.source, transport.sink)
    await device.power_on()
    return transport, device


def peer_address(peer: PeerProcess) -> hci.Address:
    text, _, kind = peer.address.partition("/")
    return hci.Address(text, hci.Address.RANDOM_DEVICE_ADDRESS if kind == "random"
                       else hci.Address.PUBLIC_DEVICE_ADDRESS)


# ---------------------------------------------------------------------------------------
async def scan(device: Device, address: hci.Address, timeout: float = 3.0):
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement):
        if advertisement.address == address and not found.done():
            found.set_result(advertisement)

    device.on("advertisement", on_advertisement)
    start = time.perf_counter()
    await device.start_scanning()
    try:
        advertisement = await asyncio.wait_for(found, timeout)
    finally:
        device.remove_listener("advertisement", on_advertisement)
        await device.stop_scanning()
    return advertisement, time.perf_counter() - start


def ad_structures(data: bytes) -> dict[int, bytes]:
    result, i = {}, 0
    while i < len(data) and data[i]:
        length = data[i]
        result[data[i + 1]] = data[i + 2:i + 1 + length]
        i += 1 + length
    return result


def client_database(peer: Peer, address: str, mtu: int) -> dict:
    services = []
    for service in peer.services:
        characteristics = []
        for characteristic in service.characteristics:
            characteristics.append({
                "uuid": uuid_text(characteristic.uuid),
                "handle": characteristic.handle,
                "properties": property_names(int(characteristic.properties)),
                "descriptors": [{"uuid": uuid_text(d.type), "handle": d.handle}
                                for d in characteristic.descriptors],
            })
        services.append({"uuid": uuid_text(service.uuid), "start": service.handle,
                         "end": service.end_group_handle, "characteristics": characteristics})
    return {"address": address, "mtu": mtu, "services": services}


def find_characteristic(peer: Peer, uuid: str):
    for service in peer.services:
        for characteristic in service.characteristics:
            if uuid_text(characteristic.uuid) == uuid:
                return characteristic
    raise AssertionError(f"characteristic {uuid} not discovered")


# ---------------------------------------------------------------------------------------
async def main_flow(peer: PeerProcess) -> None:
    address = peer_address(peer)

    # -- first client: everything GATT ----------------------------------------------------
    transport, device = await open_client(peer)
    advertisement, seconds = await scan(device, address)
    timing("scan: first advertisement", ms(seconds))
    ads = ad_structures(advertisement.data_bytes)
    check(len(advertisement.data_bytes) <= 31, "legacy advertisement fits 31 bytes")
    check(ads.get(AdvertisingData.COMPLETE_LOCAL_NAME) == GENERIC_NAME.encode(), "advertised name")
    check(ads.get(AdvertisingData.FLAGS) == b"\x06", "advertised flags")
    check(ads.get(AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) == b"\x0f\x18",
          "advertised 16-bit UUIDs")
    check(ads.get(AdvertisingData.MANUFACTURER_SPECIFIC_DATA) == GENERIC_MANUFACTURER,
          "advertised manufacturer data")

    start = time.perf_counter()
    connection = await device.connect(address, own_address_type=hci.OwnAddressType.PUBLIC)
    timing("connect (public own address)", ms(time.perf_counter() - start))
    state = (await peer.ok(cmd="state"))
    check(state["connected"] and state["peer"] == "A0:A0:A0:00:00:01" and state["peerType"] == "public",
          f"peer sees our public address: {state}")

    client = Peer(connection)
    start = time.perf_counter()
    mtu = await client.request_mtu(247)
    timing("MTU exchange", ms(time.perf_counter() - start))
    check(mtu == 247, f"mtu {mtu}")

    start = time.perf_counter()
    await client.discover_all()
    timing("discover all", ms(time.perf_counter() - start))
    database = (await peer.ok(cmd="database"))["database"]
    mine = client_database(client, peer.address.split("/")[0], mtu)
    check(database == mine, f"discovery equals database command:\n{json.dumps(database)}\n{json.dumps(mine)}")
    uuids = [s["uuid"] for s in database["services"]]
    check(uuids[-2:] == [char_uuid(1), "180F"] and "1800" in uuids, f"services {uuids}")

    start = time.perf_counter()
    value = await find_characteristic(client, char_uuid(2)).read_value()
    timing("read (short)", ms(time.perf_counter() - start))
    check(value == GENERIC_SHORT_VALUE, "short value")
    start = time.perf_counter()
    value = await find_characteristic(client, char_uuid(3)).read_value()
    timing("read long (300 B, Read Blob)", ms(time.perf_counter() - start))
    check(value == GENERIC_LONG_VALUE, "long value (300 bytes)")
    described = find_characteristic(client, char_uuid(8))
    user_description = [d for d in described.descriptors if uuid_text(d.type) == "2901"]
    check(len(user_description) == 1, "user description descriptor")
    check(await user_description[0].read_value() == GENERIC_USER_DESCRIPTION.encode(), "user description")
    battery = find_characteristic(client, "2A19")
    check(await battery.read_value() == bytes([87]), "battery level")

    try:
        await find_characteristic(client, char_uuid(7)).read_value()
        check(False, "reading the indicate-only characteristic must fail")
    except Exception as error:  # ProtocolError with Read Not Permitted
        check("READ_NOT_PERMITTED" in str(error).upper(), f"read not permitted: {error}")

    start = time.perf_counter()
    await find_characteristic(client, char_uuid(4)).write_value(b"\x01\x02\x03", with_response=True)
    timing("write with response", ms(time.perf_counter() - start))
    await find_characteristic(client, char_uuid(5)).write_value(b"\xaa\xbb", with_response=False)
    writes = await wait_until(
        lambda: _writes_when(peer, 2), 2.0, "two writes recorded")
    check([w["hex"] for w in writes] == ["010203", "aabb"], f"writes {writes}")
    check([w["characteristic"] for w in writes] == ["write", "writeWithoutResponse"], "write roles")

    # notifications: 2000 x 20 bytes
    notify_char = find_characteristic(client, char_uuid(6))
    received: list[bytes] = []
    done = asyncio.Event()
    count = 2000
    first_at = [0.0]

    def on_notification(value: bytes):
        if not received:
            first_at[0] = time.perf_counter()
        received.append(value)
        if len(received) == count:
            done.set()

    await notify_char.subscribe(on_notification, prefer_notify=True)
    state = await peer.ok(cmd="state")
    check(state["subscriptions"].get(char_uuid(6)) == ["notify"], f"subscription seen by peer: {state}")
    start = time.perf_counter()
    answer = await peer.ok(cmd="notify", count=count, size=20)
    await asyncio.wait_for(done.wait(), 30)
    elapsed = time.perf_counter() - start
    sequences = [struct.unpack_from("<I", v)[0] for v in received]
    check(sequences == list(range(count)), "notifications in order, none lost")
    check(all(len(v) == 20 for v in received), "notification size")
    timing(f"notifications ({count} x 20 B) client-side", f"{count / elapsed:.0f}/s ({ms(elapsed)})")
    timing("notifications peer send+drain", f"{answer['perSecond']:.0f}/s ({ms(answer['seconds'])})")
    # big ones (MTU - 3 = 244 bytes, fragmented into 27-byte LL packets)
    received.clear()
    done.clear()
    count = 200
    start = time.perf_counter()
    await peer.ok(cmd="notify", count=count, size=1000)  # clamped to MTU - 3
    await asyncio.wait_for(done.wait(), 30)
    elapsed = time.perf_counter() - start
    check(all(len(v) == 244 for v in received), "notification clamped to MTU - 3")
    timing(f"notifications ({count} x 244 B) client-side",
           f"{count / elapsed:.0f}/s, {count * 244 / elapsed / 1000:.0f} kB/s")

    indications: list[bytes] = []
    await find_characteristic(client, char_uuid(7)).subscribe(indications.append, prefer_notify=False)
    answer = await peer.ok(cmd="indicate", count=100)
    check(len(indications) == 100 and answer["confirmed"] == 100, "indications confirmed")
    timing("indications (100)", f"{answer['perSecond']:.0f}/s")

    # raw PDUs reach the central: a hand-made notification through raw_att and raw_l2cap
    received.clear()
    handle = struct.pack("<H", notify_char.handle).hex()
    await peer.ok(cmd="raw_att", hex="1b" + handle + "c0ffee")
    await peer.ok(cmd="raw_l2cap", cid=4, hex="1b" + handle + "beef")
    await wait_until(lambda: _true(len(received) == 2), 2, "raw notifications")
    check(received == [bytes.fromhex("c0ffee"), bytes.fromhex("beef")], f"raw PDUs {received}")

    # peer-initiated disconnect with a chosen reason
    disconnected = asyncio.get_running_loop().create_future()
    connection.on("disconnection", lambda reason: disconnected.done() or disconnected.set_result(reason))
    await peer.ok(cmd="disconnect", reason=0x16)
    reason = await asyncio.wait_for(disconnected, 3)
    check(reason == 0x16, f"disconnect reason {reason}")
    await wait_until(lambda: _state_is(peer, connected=False), 2, "peer disconnected")

    # -- the client vanishes mid-connection (TCP closed): A must be power-cycled ---------
    connection = await device.connect(address, own_address_type=hci.OwnAddressType.PUBLIC)
    check((await peer.ok(cmd="state"))["connected"], "connected again")
    before = (await peer.ok(cmd="state"))["hosts"]["tcp"]["powerCycles"]
    await transport.close()
    await wait_until(lambda: _state_is(peer, connected=False), 3, "peer sees the link drop")
    state = await peer.ok(cmd="state")
    check(state["hosts"]["tcp"]["powerCycles"] == before + 1 and not state["hosts"]["tcp"]["attached"],
          f"controller A power-cycled: {state['hosts']}")

    # -- second client: starts clean, reconnects, then HCI_Reset while connected ---------
    start = time.perf_counter()
    transport, device = await open_client(peer)
    timing("new client: power on (HCI init)", ms(time.perf_counter() - start))
    start = time.perf_counter()
    connection = await device.connect(address, own_address_type=hci.OwnAddressType.PUBLIC)
    timing("reconnect after client vanished", ms(time.perf_counter() - start))
    client = Peer(connection)
    await client.discover_all()
    check(await find_characteristic(client, char_uuid(2)).read_value() == GENERIC_SHORT_VALUE,
          "read after reconnect")
    check((await peer.ok(cmd="state"))["subscriptions"] == {}, "no subscriptions left from before")

    # HCI_Reset while connected: the peer sees the link drop and advertises again
    await device.host.send_command(hci.HCI_Reset_Command())
    await wait_until(lambda: _state_is(peer, connected=False), 3, "link dropped by HCI_Reset")
    await transport.close()

    # -- third client: random own address also works; blackhole -------------------------
    transport, device = await open_client(peer)
    connection = await device.connect(address)  # bumble's default: random own address
    client = Peer(connection)
    await client.discover_services()
    await peer.ok(cmd="blackhole", on=True)
    try:
        await asyncio.wait_for(client.discover_characteristics(), 0.5)
        check(False, "blackholed request must not be answered")
    except asyncio.TimeoutError:
        check(True, "blackhole")
    await peer.ok(cmd="disconnect", reason=0x13)
    await wait_until(lambda: _state_is(peer, connected=False), 3, "disconnected")
    check((await peer.ok(cmd="state"))["blackhole"] is False, "blackhole cleared on disconnection")

    # live advertising data change
    new_data = bytes.fromhex("020106") + bytes([5, 0x09]) + b"live"
    await peer.ok(cmd="advertise", data_hex=new_data.hex())
    advertisement, _ = await scan(device, address)
    check(advertisement.data_bytes == new_data, "advertising data changed live")
    await transport.close()


async def _writes_when(peer, n):
    writes = (await peer.control(cmd="writes"))["writes"]  # polled: not counted as checks
    return writes if len(writes) >= n else None


async def _true(value):
    return value


async def _state_is(peer, connected):
    return (await peer.control(cmd="state"))["connected"] == connected


# ---------------------------------------------------------------------------------------
async def h4_raw(peer: PeerProcess) -> dict:
    """Host-side knobs through a raw H4 socket (no bumble host in between)."""
    host, port = peer.tcp.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))

    async def read_event(timeout=1.0) -> bytes:
        header = await asyncio.wait_for(reader.readexactly(3), timeout)
        check(header[0] == 0x04, f"event packet, got {header.hex()}")
        return header + await asyncio.wait_for(reader.readexactly(header[2]), timeout)

    reset = bytes.fromhex("01030c00")
    writer.write(reset)
    check(await read_event() == bytes.fromhex("040e0401030c00"), "reset answered")
    await peer.ok(cmd="garbage_h4", hex="deadbeef")
    check(await asyncio.wait_for(reader.readexactly(4), 1) == bytes.fromhex("deadbeef"), "garbage injected")
    await peer.ok(cmd="mute_controller", opcode="0x0C03")
    writer.write(reset)
    try:
        await read_event(0.3)
        check(False, "muted command must not be answered")
    except asyncio.TimeoutError:
        check(True, "muted")
    await peer.ok(cmd="mute_controller", opcode="0x0C03", on=False)
    writer.write(reset)
    check(await read_event() == bytes.fromhex("040e0401030c00"), "unmuted reset answered")
    # LE Create Connection Cancel completes the pending connection with status 0x02
    writer.write(bytes.fromhex("010d2019" "6000" "3000" "00" "00" "665544332211" "00"
                               "1800" "2800" "0000" "c800" "0000" "0000"))
    check(await read_event() == bytes.fromhex("040f0400010d20"), "create connection pending")
    writer.write(bytes.fromhex("010e2000"))
    check(await read_event() == bytes.fromhex("040e04010e2000"), "cancel answered")
    event = await read_event()
    check(event[:6] == bytes.fromhex("043e13010200"), f"LE Connection Complete, 0x02: {event.hex()}")
    # which report type does scanning produce?
    writer.write(bytes.fromhex("013f2008ffffffffffffff1f"))  # LE Set Event Mask: all
    await read_event()
    writer.write(bytes.fromhex("010c20020100"))  # LE Set Scan Enable: on, no dup filter
    await read_event()
    while True:
        event = await read_event(3)
        if event[1] == 0x3E:
            break
    writer.close()
    return {"subevent": event[3], "event": event}


async def pty_raw(peer: PeerProcess) -> None:
    """The pty exposes its own controller A (our uart: transport)."""
    import termios
    import tty
    fd = os.open(peer.fields["pty"], os.O_RDWR | os.O_NOCTTY)
    try:
        tty.setraw(fd, termios.TCSANOW)
        os.write(fd, bytes.fromhex("01030c00") + bytes.fromhex("010910 00"))  # Reset, Read BD_ADDR
        loop = asyncio.get_running_loop()
        data = b""
        deadline = time.monotonic() + 2
        while len(data) < 7 + 13 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
            try:
                os.set_blocking(fd, False)
                data += os.read(fd, 256)
            except BlockingIOError:
                pass
        check(data[:7] == bytes.fromhex("040e0401030c00"), f"pty: reset answered {data.hex()}")
        check(data[7:] == bytes.fromhex("040e0a01091000020000a0a0a0"), f"pty: BD_ADDR {data.hex()}")
    finally:
        os.close(fd)


async def report_kinds(default: PeerProcess) -> None:
    async with PeerProcess("--legacy-reports", "--random") as legacy, PeerProcess("--extended") as extended:
        result = await h4_raw(default)
        check(result["subevent"] == 0x0D, "default: LE Extended Advertising Report")
        result = await h4_raw(legacy)
        check(result["subevent"] == 0x02, "--legacy-reports: LE Advertising Report")
        check(legacy.address.endswith("/random") and result["event"][6] == 0x01, "random address type")
        result = await h4_raw(extended)
        check(result["subevent"] == 0x0D, "--extended: extended report")
        data_length = result["event"][4 + 24]
        check(data_length == 47, f"extended advertising data length {data_length}")


async def main() -> int:
    logging.basicConfig(level=logging.CRITICAL)
    started = time.perf_counter()
    snoop = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ble-peer-selftest-{os.getpid()}.btsnoop")
    async with PeerProcess("--pty", "--btsnoop", snoop) as peer:
        timing("peer start to READY", ms(time.perf_counter() - started))
        await main_flow(peer)
        await report_kinds(peer)
        await pty_raw(peer)
    with open(snoop, "rb") as capture:
        check(capture.read(8) == b"btsnoop\0" and os.path.getsize(snoop) > 10000, "btsnoop capture written")
    os.unlink(snoop)
    width = max(len(name) for name, _ in TIMINGS)
    print("bumble host against the peer (bumble 0.0.236, virtual controllers):")
    for name, value in TIMINGS:
        print(f"  {name:<{width}}  {value}")
    print(f"took {time.perf_counter() - started:.1f} s")
    return 0


def run() -> int:
    try:
        code = asyncio.run(asyncio.wait_for(main(), 90))
    except BaseException as error:  # noqa: BLE001 - report any failure the same way
        import traceback
        traceback.print_exc()
        print(f"FAILED after {CHECKS} checks: {type(error).__name__}: {error}", file=sys.stderr)
        print(f"selftest: {CHECKS} passed, 1 failed")
        return 1
    print(f"selftest: {CHECKS} passed, 0 failed")
    return code


if __name__ == "__main__":
    sys.exit(run())
