#!/usr/bin/env python3
"""Self-test of the simulated-device profiles, with bumble's own host as the client.

- mirror: the extended advertisement (raw H4: an LE Extended Advertising Report with all four
  fields), ATT errors (0x81 token before init, 0x13, 0x0D, 0x82, 0x02 result, 0x80 confirm before
  aligned), Write Command ignored, then a full good scan through every state, the result; then a
  disconnect fault in warmingUp and a retry that completes.
- scale: feature, three indications 70.0 -> 72.3 -> 72.35 kg, then the `weigh` command (imperial).
- bcs: the two-packet Body Composition Measurement.
- miscale / miscale2: the service data changes over a weighing to stable + load removed.

Run with the peers' venv: `$(scripts/setup-peers) Tests/Peers/selftest_profiles.py`. Exit 0 on success.
"""
from __future__ import annotations

import asyncio
import logging
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import selftest as st  # noqa: E402
from bumble import hci  # noqa: E402
from bumble.core import AdvertisingData  # noqa: E402
from bumble.device import Peer  # noqa: E402

from peerkit.mirror import MIRROR_BASE, MIRROR_MANUFACTURER, MIRROR_NAME, MIRROR_SERVICE  # noqa: E402
from peerkit.scales import BCM_MULTIPLE_PACKET, WS_FEATURE  # noqa: E402

check = st.check
RESULTS: list[str] = []


def m(n: int) -> str:
    return MIRROR_BASE.format(n)


async def att_error(coroutine) -> int | None:
    try:
        await coroutine
    except Exception as error:  # bumble raises ATT_Error(error_code=...)
        return getattr(error, "error_code", None)
    return None


async def raw_extended_report(peer: st.PeerProcess) -> bytes:
    """Scan over raw H4 and return the advertising data of the peer's LE Extended Advertising Report."""
    host, port = peer.tcp.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))

    async def event(timeout=2.0) -> bytes:
        header = await asyncio.wait_for(reader.readexactly(3), timeout)
        return header + await asyncio.wait_for(reader.readexactly(header[2]), timeout)

    try:
        for command in ("01030c00", "013f2008ffffffffffffff1f", "010c20020100"):
            writer.write(bytes.fromhex(command))
            await event()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            e = await event(3)
            if e[1] == 0x3E and e[3] == 0x0D:
                check(e[4] == 1, "one report")
                event_type = struct.unpack_from("<H", e, 5)[0]
                length = e[28]
                check(event_type & 0x10 == 0, f"extended (non-legacy) PDU, event type 0x{event_type:04X}")
                check(event_type & 0x01, "connectable")
                return e[29:29 + length]
            check(not (e[1] == 0x3E and e[3] == 0x02), "no legacy report for the mirror")
        raise AssertionError("no LE Extended Advertising Report")
    finally:
        writer.close()


# ---------------------------------------------------------------------------------------
async def mirror_test() -> None:
    async with st.PeerProcess("--profile", "mirror") as peer:
        data = await raw_extended_report(peer)
        ads = st.ad_structures(data)
        check(len(data) == 45, f"mirror advertising data is 45 bytes, got {len(data)}")
        check(ads.get(AdvertisingData.FLAGS) == b"\x06", "flags")
        from bumble.core import UUID
        check(ads.get(AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS)
              == UUID(MIRROR_SERVICE).to_bytes(force_128=True), "128-bit service UUID")
        check(ads.get(AdvertisingData.MANUFACTURER_SPECIFIC_DATA) == MIRROR_MANUFACTURER
              == bytes.fromhex("ffff4d520100004f2a"), "manufacturer data")
        check(ads.get(AdvertisingData.COMPLETE_LOCAL_NAME) == MIRROR_NAME.encode(), "name")
        RESULTS.append("mirror: LE Extended Advertising Report, 45 bytes, all four fields")

        start = time.perf_counter()
        await full_scan(peer, first=True)
        RESULTS.append(f"mirror: full good scan in {time.perf_counter() - start:.2f} s (speed 10)")

        # fault: disconnect 100 ms into warmingUp; it fires once, then a retry completes
        await peer.ok(cmd="mirror_fault", fault="disconnect", state="warmingUp", after_ms=100)
        transport, device = await st.open_client(peer)
        try:
            connection = await device.connect(st.peer_address(peer), own_address_type=hci.OwnAddressType.PUBLIC)
            client = Peer(connection)
            await client.discover_all()
            gone = asyncio.Event()
            connection.on("disconnection", lambda reason: gone.set())
            await wait_aligned(client)
            await client_write(client, 8, b"\x01")
            await client_write(client, 3, struct.pack("<BHB", 1, 1780, 0))
            await client_write(client, 4, bytes(range(16)))
            await asyncio.wait_for(gone.wait(), 3)
            check(True, "disconnect fault in warmingUp")
        finally:
            await transport.close()
        state = await st.wait_until(lambda: _mirror_idle(peer), 3, "peer idle and advertising after fault")
        check(state["mirror"]["faults"] == {} and not state["connected"], "fault cleared after disconnection")
        await full_scan(peer, first=False)
        RESULTS.append("mirror: disconnect fault in warmingUp, then a retry completes")

        # fault: error code 2 when ready
        await peer.ok(cmd="mirror_fault", fault="error", state="ready", code=2)
        transport, device = await st.open_client(peer)
        try:
            connection = await device.connect(st.peer_address(peer), own_address_type=hci.OwnAddressType.PUBLIC)
            client = Peer(connection)
            await client.discover_all()
            states = []
            await st.find_characteristic(client, m(5)).subscribe(lambda v: states.append(bytes(v)))
            await client_write(client, 3, struct.pack("<BHB", 1, 1780, 0))
            await client_write(client, 4, bytes(16))
            await st.wait_until(lambda: st._true(any(s[0] == 7 for s in states)), 3, "error state")
            check(next(s for s in states if s[0] == 7) == bytes([7, 0, 2]), f"error 2: {states}")
            check(await att_error(client_write(client, 8, b"\x02")) == 0x82, "start scan in error: 0x82")
            await client_write(client, 8, b"\x04")
            check(await st.find_characteristic(client, m(5)).read_value() == bytes([0, 0, 0]), "reset -> idle")
            await connection.disconnect()
        finally:
            await transport.close()
        RESULTS.append("mirror: error fault (code 2) in ready, reset -> idle")


async def mirror_session(peer):
    transport, connection, client = await connect(peer)
    states: list[bytes] = []
    scales: list[bytes] = []
    await st.find_characteristic(client, m(5)).subscribe(lambda v: states.append(bytes(v)))
    await st.find_characteristic(client, m(6)).subscribe(lambda v: scales.append(bytes(v)))
    await st.find_characteristic(client, m(7)).subscribe(lambda v: None)
    return transport, connection, client, states, scales


async def to_scanning(client, states, scales):
    await wait_aligned(client)
    await client_write(client, 8, b"\x01")
    await client_write(client, 3, struct.pack("<BHB", 1, 1780, 1))
    await client_write(client, 4, bytes(16))
    await st.wait_until(lambda: st._true(any(v[0] & 0x06 == 0x06 for v in scales)), 3, "person stable")
    await client_write(client, 8, b"\x02")


async def mirror_faults() -> None:
    async with st.PeerProcess("--profile", "mirror") as peer:
        # battery 8 %: deviceInfo shows it, start scan -> error 6
        await peer.ok(cmd="mirror_fault", battery=8)
        transport, connection, client, states, scales = await mirror_session(peer)
        try:
            check((await st.find_characteristic(client, m(2)).read_value())[4] == 8, "battery 8")
            await to_scanning(client, states, scales)
            await st.wait_until(lambda: st._true(states and states[-1] == bytes([7, 0, 6])), 2, "error 6")
            await connection.disconnect()
        finally:
            await transport.close()
        await st.wait_until(lambda: _mirror_idle(peer), 3, "idle")
        RESULTS.append("mirror: battery 8 % -> start scan gives error 6")

        # step off early at 30 %: error 4 after progress 25
        await peer.ok(cmd="mirror_fault", fault="step_off_early", progress=30)
        transport, connection, client, states, scales = await mirror_session(peer)
        try:
            check((await st.find_characteristic(client, m(2)).read_value())[4] == 76, "battery fault cleared")
            await to_scanning(client, states, scales)
            await st.wait_until(lambda: st._true(states and states[-1][0] == 7), 3, "error 4")
            check(states[-1] == bytes([7, 0, 4]) and states[-2] == bytes([3, 25, 0]), f"stepped off early {states[-3:]}")
            check(scales[-1][0] & 0x02 == 0, "scale no longer occupied")
            await connection.disconnect()
        finally:
            await transport.close()
        await st.wait_until(lambda: _mirror_idle(peer), 3, "idle")
        RESULTS.append("mirror: step_off_early at 30 % -> error 4")

        # silence from scanning: no more notifications, the mirror freezes
        await peer.ok(cmd="mirror_fault", fault="silence", state="scanning")
        transport, connection, client, states, scales = await mirror_session(peer)
        try:
            await to_scanning(client, states, scales)
            await asyncio.sleep(1.0)
            check([s for s in states if s[0] == 3] == [bytes([3, 0, 0])], f"silent after scanning started {states[-3:]}")
            mirror = (await peer.ok(cmd="mirror_state"))["mirror"]
            check(mirror["silent"] and mirror["state"] == "scanning", f"mirror_state {mirror}")
            await connection.disconnect()
        finally:
            await transport.close()
        await st.wait_until(lambda: _mirror_idle(peer), 3, "idle")
        RESULTS.append("mirror: silence from scanning")

        # the scale never shows up
        await peer.ok(cmd="mirror_fault", fault="scale_never_present")
        transport, connection, client, states, scales = await mirror_session(peer)
        try:
            await asyncio.sleep(0.6)
            check((await st.find_characteristic(client, m(6)).read_value())[0] == 0 and not scales, "scale never present")
            await connection.disconnect()
        finally:
            await transport.close()
        RESULTS.append("mirror: scale_never_present")


async def _mirror_idle(peer):
    state = await peer.control(cmd="state")
    return state if not state["connected"] and state["mirror"]["state"] == "idle" else None


async def client_write(client: Peer, n: int, value: bytes, with_response: bool = True):
    await st.find_characteristic(client, m(n)).write_value(value, with_response=with_response)


async def wait_aligned(client: Peer, timeout: float = 5.0):
    alignment = st.find_characteristic(client, m(7))

    async def aligned():
        value = await alignment.read_value()
        return value if value[2] & 1 else None
    return await st.wait_until(aligned, timeout, "aligned")


async def full_scan(peer: st.PeerProcess, first: bool) -> None:
    transport, device = await st.open_client(peer)
    try:
        connection = await device.connect(st.peer_address(peer), own_address_type=hci.OwnAddressType.PUBLIC)
        client = Peer(connection)
        await client.discover_all()
        info = await st.find_characteristic(client, m(2)).read_value()
        check(info == bytes([1, 1, 4, 2, 76]), f"deviceInfo {info.hex()}")
        if first:
            # errors before anything else
            check(await att_error(client_write(client, 4, bytes(16))) == 0x81, "token before init: 0x81")
            check(await att_error(client_write(client, 3, struct.pack("<BHB", 2, 1780, 0))) == 0x13, "init opcode: 0x13")
            check(await att_error(client_write(client, 3, struct.pack("<BHB", 1, 1780, 2))) == 0x13, "init units: 0x13")
            check(await att_error(client_write(client, 3, b"\x01\x02")) == 0x0D, "init length: 0x0D")
            check(await att_error(client_write(client, 4, bytes(15))) == 0x0D, "token length: 0x0D")
            check(await att_error(client_write(client, 8, b"\x02")) == 0x82, "start scan in idle: 0x82")
            check(await att_error(client_write(client, 8, b"\x09")) == 0x13, "unknown control opcode: 0x13")
            check(await att_error(st.find_characteristic(client, m(9)).read_value()) == 0x02, "result before complete: 0x02")
            alignment = await st.find_characteristic(client, m(7)).read_value()
            if not alignment[2] & 1:
                check(await att_error(client_write(client, 8, b"\x01")) == 0x80, "confirm before aligned: 0x80")
            # a Write Command to a write-request-only characteristic is ignored
            await client_write(client, 3, struct.pack("<BHB", 1, 1780, 0), with_response=False)
            await asyncio.sleep(0.1)
            check(not (await peer.ok(cmd="mirror_state"))["mirror"]["initialized"], "write command ignored")

        states: list[bytes] = []
        scales: list[bytes] = []
        alignments: list[bytes] = []
        await st.find_characteristic(client, m(5)).subscribe(lambda v: states.append(bytes(v)))
        await st.find_characteristic(client, m(6)).subscribe(lambda v: scales.append(bytes(v)))
        await st.find_characteristic(client, m(7)).subscribe(lambda v: alignments.append(bytes(v)))
        scale = st.find_characteristic(client, m(6))
        await st.wait_until(lambda: _scale_flags(scale, 0x01), 5, "scale present")
        await wait_aligned(client)
        await client_write(client, 8, b"\x01")
        await client_write(client, 3, struct.pack("<BHB", 1, 1780, 0))
        await client_write(client, 4, bytes(range(16)))
        await st.wait_until(lambda: st._true(any(s[0] == 2 for s in states)), 3, "ready")
        await st.wait_until(lambda: st._true(any(v[0] & 0x06 == 0x06 for v in scales)), 3, "person stable")
        stable = next(v for v in scales if v[0] & 0x06 == 0x06)
        check(stable == bytes([0x0F]) + struct.pack("<H", 14470), f"stable 72.35 kg: {stable.hex()}")
        await client_write(client, 8, b"\x02")
        await st.wait_until(lambda: st._true(any(s[0] == 6 for s in states)), 5, "complete")
        order = []
        for s in states:
            if not order or order[-1] != s[0]:
                order.append(s[0])
        check(order == [1, 2, 3, 4, 5, 6], f"state order {order}")
        scanning = [s[1] for s in states if s[0] == 3]
        check(scanning == list(range(0, 101, 5)), f"scanning progress {scanning}")
        processing = [s[1] for s in states if s[0] == 5]
        check(processing[0] == 0 and processing[-1] == 100, f"processing progress {processing}")
        if first:
            check([tuple(a) for a in alignments][-1] == (0xFF, 51, 1), f"alignment readings {alignments}")
            check(len(alignments) >= 2, f"alignment notified as it changed {alignments}")
            occupied = [v for v in scales if v[0] & 0x02]
            check(len(occupied) >= 10, f"scale notified while occupied ({len(occupied)})")
            check(scales[-1] == bytes([0x09, 0, 0]), f"stepped off: {scales[-1].hex()}")
        result = await st.find_characteristic(client, m(9)).read_value()
        check(struct.unpack("<IHHI", result) == (40213, 14470, 184, 412388), f"result {result.hex()}")
        await connection.disconnect()
    finally:
        await transport.close()


async def _scale_flags(scale, bit):
    value = await scale.read_value()
    return value if value[0] & bit else None


# ---------------------------------------------------------------------------------------
async def connect(peer):
    transport, device = await st.open_client(peer)
    connection = await device.connect(st.peer_address(peer), own_address_type=hci.OwnAddressType.PUBLIC)
    client = Peer(connection)
    await client.discover_all()
    return transport, connection, client


async def scale_test() -> None:
    async with st.PeerProcess("--profile", "scale") as peer:
        scan_transport, scanner = await st.open_client(peer)
        advertisement, _ = await st.scan(scanner, st.peer_address(peer))
        await scan_transport.close()
        ads = st.ad_structures(advertisement.data_bytes)
        check(ads.get(AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) == b"\x1d\x18", "scale: 181D advertised")
        check(ads.get(AdvertisingData.COMPLETE_LOCAL_NAME) == b"WS Scale", "scale: name")
        transport, connection, client = await connect(peer)
        try:
            feature = await st.find_characteristic(client, "2A9E").read_value()
            check(struct.unpack("<I", feature)[0] == WS_FEATURE == 0x1BF, f"feature {feature.hex()}")
            got: list[bytes] = []
            await st.find_characteristic(client, "2A9D").subscribe(lambda v: got.append(bytes(v)), prefer_notify=False)
            await st.wait_until(lambda: st._true(len(got) >= 3), 3, "three indications")
            kgs = [struct.unpack_from("<H", v, 1)[0] * 0.005 for v in got]
            check([round(k, 3) for k in kgs] == [70.0, 72.3, 72.35], f"weights {kgs}")
            check(all(v[0] == 0x0E and len(v) == 15 for v in got), "flags 0x0E, 15 bytes")
            check(got[-1][10] == 1 and struct.unpack_from("<HH", got[-1], 11) == (228, 1780), "user, BMI, height")
            answer = await peer.ok(cmd="weigh", kg=[80.0], imperial=True, gap_ms=0)
            await st.wait_until(lambda: st._true(len(got) >= 4), 2, "custom indication")
            check(got[3][0] == 0x0F and struct.unpack_from("<H", got[3], 1)[0] == 17637, f"imperial {got[3].hex()}")
            check(answer["indicated"] == 1, "weigh answer")
            RESULTS.append("scale: 3 indications 70.0/72.3/72.35 kg + weigh (imperial 176.37 lb)")
            await connection.disconnect()
        finally:
            await transport.close()


async def bcs_test() -> None:
    async with st.PeerProcess("--profile", "bcs") as peer:
        transport, connection, client = await connect(peer)
        try:
            feature = struct.unpack("<I", await st.find_characteristic(client, "2A9B").read_value())[0]
            check(feature == 0x1BFFF, f"bcs feature 0x{feature:X}")
            got: list[bytes] = []
            await st.find_characteristic(client, "2A9C").subscribe(lambda v: got.append(bytes(v)), prefer_notify=False)
            await st.wait_until(lambda: st._true(len(got) >= 2), 3, "two BCM packets")
            f1, f2 = (struct.unpack_from("<H", v)[0] for v in got[:2])
            check(f1 & BCM_MULTIPLE_PACKET and f2 & BCM_MULTIPLE_PACKET, "multiple packet bit in both")
            check((f1, len(got[0]), f2, len(got[1])) == (0x107E, 20, 0x1F80, 14), f"packets {got[0].hex()} {got[1].hex()}")
            check(struct.unpack_from("<H", got[1], 2)[0] == 184 and struct.unpack_from("<HH", got[1], 8) == (5000, 14470),
                  "fat, impedance, weight")
            refused = await peer.control(cmd="bcs_measure", split=False)
            check(not refused["ok"] and "ATT_MTU 23" in refused["error"], f"unsplit needs a bigger MTU: {refused}")
            check(await client.request_mtu(64) == 64, "mtu 64")
            answer = await peer.ok(cmd="bcs_measure", split=False, fat=20.0)
            await st.wait_until(lambda: st._true(len(got) >= 3), 2, "single packet")
            check(len(got[2]) == 30 and struct.unpack_from("<HH", got[2]) == (0x0FFE, 200), f"single {got[2].hex()}")
            check(answer["indicated"] == 1, "bcs_measure answer")
            RESULTS.append("bcs: 2-packet BCM (flags 0x107E / 0x1F80) + bcs_measure unsplit")
            await connection.disconnect()
        finally:
            await transport.close()


async def mi_test(profile: str, uuid16: int, size: int) -> None:
    async with st.PeerProcess("--profile", profile) as peer:
        transport, device = await st.open_client(peer)
        try:
            frames: list[bytes] = []
            address = st.peer_address(peer)

            def on_advertisement(advertisement):
                if advertisement.address != address:
                    return
                data = st.ad_structures(advertisement.data_bytes).get(AdvertisingData.SERVICE_DATA_16_BIT_UUID)
                if data and data[:2] == struct.pack("<H", uuid16) and (not frames or frames[-1] != data[2:]):
                    frames.append(data[2:])

            device.on("advertisement", on_advertisement)
            await device.start_scanning()
            await peer.ok(cmd="mi_weigh", kg=72.35, impedance=500)
            removed = (lambda f: f[1] & 0x80) if size == 13 else (lambda f: f[0] & 0x80)
            await st.wait_until(lambda: st._true(frames and removed(frames[-1]) and len(frames) >= 4), 8,
                                f"{profile}: weighing to load removed")
            await device.stop_scanning()
            check(all(len(f) == size for f in frames), f"{profile}: {size}-byte service data")
            if size == 13:
                weights = [struct.unpack_from("<H", f, 11)[0] / 200 for f in frames]
                stable = [f for f in frames if f[1] & 0x20 and f[1] & 0x02 and not f[1] & 0x80]
                check(stable and struct.unpack_from("<HH", stable[0], 9) == (500, 14470), f"stable with impedance {frames}")
            else:
                weights = [struct.unpack_from("<H", f, 1)[0] / 200 for f in frames]
                check(any(f[0] & 0x20 and not f[0] & 0x80 for f in frames), "stable frame")
            check(weights[-1] == 72.35 and min(weights) < 72.35, f"{profile}: weights {weights}")
            RESULTS.append(f"{profile}: {len(frames)} distinct frames, {weights[0]} .. {weights[-1]} kg, load removed")
        finally:
            await transport.close()


async def main() -> int:
    logging.basicConfig(level=logging.CRITICAL)
    started = time.perf_counter()
    await mirror_test()
    await mirror_faults()
    await scale_test()
    await bcs_test()
    await mi_test("miscale", 0x181B, 13)
    await mi_test("miscale2", 0x181D, 10)
    for line in RESULTS:
        print("  " + line)
    print(f"took {time.perf_counter() - started:.1f} s")
    return 0


def run() -> int:
    try:
        code = asyncio.run(asyncio.wait_for(main(), 120))
    except BaseException as error:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        print(f"FAILED after {st.CHECKS} checks: {type(error).__name__}: {error}", file=sys.stderr)
        print(f"selftest_profiles: {st.CHECKS} passed, 1 failed")
        return 1
    print(f"selftest_profiles: {st.CHECKS} passed, 0 failed")
    return code


if __name__ == "__main__":
    sys.exit(run())
