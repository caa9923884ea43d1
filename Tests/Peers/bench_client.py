#!/usr/bin/env python3
"""Benchmark client: bumble's own host as the central against a running ble_peer.py.

The counterpart of our Swift stack in `ble-bench` (Benchmarks/BLEBench): the same peer, the same
steps, the same clocks. For each of R rounds it opens a bumble host on the peer's H4 TCP port,
connects (timed), exchanges the MTU and discovers everything (timed), subscribes to the notify
characteristic (A5C30006-…), asks the peer over its control channel for N notifications of S bytes
and measures, from sending that command until the N-th notification has arrived, the wall time,
notifications per second and the CPU time of this process (time.process_time) per notification.

Prints exactly one JSON line on stdout: medians plus every round's raw figures. Diagnostics go to
stderr. Run with the peers' venv python:

    .venv-peers/bin/python Tests/Peers/bench_client.py --tcp 127.0.0.1:P --control 127.0.0.1:Q \
        --address B0:B0:B0:00:00:01 --count 5000 --size 20 --rounds 3
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bumble import hci  # noqa: E402
from bumble.device import Device, Peer  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

from peerkit.gattjson import uuid_text  # noqa: E402
from peerkit.profiles import GENERIC_BASE  # noqa: E402

NOTIFY_UUID = GENERIC_BASE.format(6)


class Control:
    """The peer's JSON-lines control channel, kept open for the whole run."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, endpoint: str) -> "Control":
        host, port = endpoint.rsplit(":", 1)
        return cls(*await asyncio.open_connection(host, int(port)))

    async def ask(self, **request) -> dict:
        self.writer.write(json.dumps(request).encode() + b"\n")
        await self.writer.drain()
        answer = json.loads(await asyncio.wait_for(self.reader.readline(), 120))
        if not answer.get("ok"):
            raise RuntimeError(f"control {request} -> {answer}")
        return answer

    def close(self) -> None:
        self.writer.close()


def parse_address(text: str) -> hci.Address:
    value, _, kind = text.partition("/")
    return hci.Address(value, hci.Address.RANDOM_DEVICE_ADDRESS if kind == "random"
                       else hci.Address.PUBLIC_DEVICE_ADDRESS)


def find_notify_characteristic(peer: Peer):
    for service in peer.services:
        for characteristic in service.characteristics:
            if uuid_text(characteristic.uuid) == NOTIFY_UUID:
                return characteristic
    raise RuntimeError(f"{NOTIFY_UUID} was not discovered")


async def wait_disconnected(control: Control, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while (await control.ask(cmd="state"))["connected"]:
        if time.monotonic() > deadline:
            raise RuntimeError("the peer still reports a connection")
        await asyncio.sleep(0.02)


async def one_round(args, control: Control, address: hci.Address) -> dict:
    figures: dict = {}

    started = time.perf_counter()
    transport = await open_transport(f"tcp-client:{args.tcp}")
    device = Device.with_hci("bench", hci.Address("F0:F0:F0:F0:F0:F0"), transport.source, transport.sink)
    await device.power_on()
    figures["openSeconds"] = time.perf_counter() - started

    try:
        started = time.perf_counter()
        connection = await device.connect(address, own_address_type=hci.OwnAddressType.PUBLIC)
        figures["connectSeconds"] = time.perf_counter() - started

        client = Peer(connection)
        started = time.perf_counter()
        mtu = await client.request_mtu(247)
        await client.discover_all()
        figures["discoverySeconds"] = time.perf_counter() - started
        figures["mtu"] = mtu

        characteristic = find_notify_characteristic(client)
        count = args.count
        state = {"received": 0, "lastSequence": -1, "outOfOrder": 0}
        done = asyncio.Event()

        def on_value(value: bytes) -> None:
            state["received"] += 1
            if len(value) >= 4:
                sequence = struct.unpack_from("<I", value)[0]
                if sequence != state["lastSequence"] + 1:
                    state["outOfOrder"] += 1
                state["lastSequence"] = sequence
            if state["received"] >= count:
                done.set()

        await characteristic.subscribe(on_value, prefer_notify=True)

        peer_cpu_before = process_cpu_seconds(args.peer_pid)
        cpu_before = time.process_time()
        wall_before = time.perf_counter()
        command = asyncio.ensure_future(control.ask(cmd="notify", count=count, size=args.size))
        try:
            await asyncio.wait_for(done.wait(), args.timeout)
        except asyncio.TimeoutError:
            pass  # report what arrived
        wall = time.perf_counter() - wall_before
        cpu = time.process_time() - cpu_before
        peer_cpu_after = process_cpu_seconds(args.peer_pid)
        answer = await command

        received = state["received"]
        figures.update({
            "received": received,
            "outOfOrder": state["outOfOrder"],
            "notifySeconds": wall,
            "notificationsPerSecond": received / wall if wall > 0 else 0.0,
            "cpuSeconds": cpu,
            "cpuMicrosecondsPerNotification": cpu / received * 1e6 if received else None,
            "peerSeconds": answer.get("seconds"),
            "peerPerSecond": answer.get("perSecond"),
        })

        if peer_cpu_before is not None and peer_cpu_after is not None and wall > 0:
            figures["peerCPUSeconds"] = peer_cpu_after - peer_cpu_before
            figures["peerCPUShare"] = (peer_cpu_after - peer_cpu_before) / wall

        disconnected = asyncio.get_running_loop().create_future()
        connection.on("disconnection", lambda reason: disconnected.done() or disconnected.set_result(reason))
        await connection.disconnect()
        await asyncio.wait_for(disconnected, 5)
    finally:
        await transport.close()
    await wait_disconnected(control)
    return figures


def process_cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of another process, from /proc/PID/stat (None elsewhere)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def median(rounds: list[dict], key: str):
    values = [r[key] for r in rounds if r.get(key) is not None]
    return statistics.median(values) if values else None


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tcp", required=True, help="the peer's H4 TCP server, HOST:PORT")
    parser.add_argument("--control", required=True, help="the peer's control channel, HOST:PORT")
    parser.add_argument("--address", required=True, help="the peripheral's address (…/random if random)")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peer-pid", type=int, help="the peer's process id, to measure its CPU share too (Linux)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the notifications")
    args = parser.parse_args()

    logging.basicConfig(level=logging.CRITICAL)
    control = await Control.open(args.control)
    address = parse_address(args.address)
    rounds = []
    try:
        for index in range(args.rounds):
            figures = await one_round(args, control, address)
            print(f"bench_client: round {index + 1}: {json.dumps(figures)}", file=sys.stderr)
            rounds.append(figures)
    finally:
        control.close()

    keys = ["openSeconds", "connectSeconds", "discoverySeconds", "notifySeconds", "notificationsPerSecond",
            "cpuSeconds", "cpuMicrosecondsPerNotification", "peerPerSecond", "peerCPUShare", "received"]
    result = {"stack": "bumble", "count": args.count, "size": args.size, "rounds": len(rounds),
              "median": {key: median(rounds, key) for key in keys}, "raw": rounds}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
