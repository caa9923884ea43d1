#!/usr/bin/env python3
"""`hwprobe serve` against bumble's own GATT server, met by the same bumble central (issue 28, item 4).

Not a test: it prints figures and ratios and asserts nothing. One bumble LocalLink (the fixed one,
Tests/Peers/peerkit/link.py) with two controllers A on TCP, one for `hwprobe serve` and one for a
bumble host in a process of its own (this script with --bumble-server), and a bumble central on
controller C in this process. Both servers play the same device: a 128-bit service with one
characteristic notifying COUNT values of SIZE bytes (sequence number first) as fast as the link
takes them once the central subscribes, in one connectable extended advertisement from a static
random address. Per round and per server it measures, from the central:

  connect-to-first-value   LE Create Connection out → the first notification in (ms), including
                           the central's discovery and its subscription;
  notifications/s          first to last value;
and from /proc/PID/stat, the serving process's CPU (user + system) from just before the
connection to the last value, per notification served.

    Benchmarks/ServeBench/serve_bench.py --hwprobe .build/release/hwprobe [--count 3000] [--size 20] [--rounds 3] [--guard]

Run it with the peers' venv (`$(scripts/setup-peers)`); `scripts/bench-serve` builds hwprobe in
release and runs it.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Peers"))

from bumble import hci  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.core import UUID  # noqa: E402
from bumble.device import (AdvertisingEventProperties, AdvertisingParameters, Device,  # noqa: E402
                           DeviceConfiguration, Peer)
from bumble.gatt import Characteristic, Service  # noqa: E402
from bumble.host import Host  # noqa: E402

from peerkit.hostside import HostPort, TcpHostServer  # noqa: E402
from peerkit.link import ConnectionAddressedLink  # noqa: E402

# The same UUIDs as hwprobe's StreamingPeripheral (Sources/Peripherals/Devices/StreamingPeripheral.swift).
SERVICE = "5EED0001-6B1E-4F2A-9D3C-2B7E5F10C4A9"
STREAM = "5EED0002-6B1E-4F2A-9D3C-2B7E5F10C4A9"
HWPROBE_ADDRESS = "C5:EE:D0:00:00:01"
BUMBLE_ADDRESS = "C5:EE:D0:00:00:02"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


# -- the bumble server, in a process of its own ----------------------------------------------
async def bumble_server(transport: str, count: int, size: int) -> None:
    from bumble.transport import open_transport
    async with await open_transport(transport) as (source, sink):
        config = DeviceConfiguration()
        config.name = "Stream"
        config.address = hci.Address(BUMBLE_ADDRESS)
        device = Device(config=config, host=Host(controller_source=source, controller_sink=sink))
        characteristic = Characteristic(STREAM, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
        device.add_service(Service(SERVICE, [characteristic]))
        await device.power_on()
        subscribed = asyncio.Event()
        characteristic.on("subscription", lambda connection, notify, indicate: subscribed.set() if notify else None)
        data = bytes([2, 1, 6, 17, 7]) + UUID(SERVICE).to_bytes() + bytes([7, 9]) + b"Stream"
        await device.create_advertising_set(
            advertising_parameters=AdvertisingParameters(
                advertising_event_properties=AdvertisingEventProperties(is_connectable=True, is_scannable=False, is_legacy=False),
                primary_advertising_interval_min=100, primary_advertising_interval_max=100,
                own_address_type=hci.OwnAddressType.RANDOM),
            random_address=hci.Address(BUMBLE_ADDRESS), advertising_data=data, auto_start=True, auto_restart=False)
        print("READY", flush=True)
        await subscribed.wait()
        for index in range(count):
            await device.notify_subscribers(characteristic, struct.pack("<I", index) + bytes([index & 0xFF]) * (size - 4))
        await asyncio.Event().wait()


# -- the central and the rounds ----------------------------------------------------------------
class Central:
    def __init__(self, link):
        self.controller = Controller("C", link=link, public_address=hci.Address("C0:C0:C0:00:00:01"))
        config = DeviceConfiguration()
        config.name = "bench-central"
        config.address = hci.Address("C3:C0:C0:00:00:01")
        self.device = Device(config=config, host=Host(controller_source=self.controller, controller_sink=self.controller))

    async def measure(self, address: str, pid: int, count: int) -> dict:
        received = 0
        first = last = None
        done = asyncio.Event()

        def on_value(_value):
            nonlocal received, first, last
            now = time.perf_counter()
            if first is None:
                first = now
            last = now
            received += 1
            if received >= count:
                done.set()

        cpu_before = cpu_seconds(pid)
        started = time.perf_counter()
        connection = await asyncio.wait_for(
            self.device.connect(hci.Address(address, hci.Address.RANDOM_DEVICE_ADDRESS), own_address_type=hci.OwnAddressType.PUBLIC), 10)
        peer = Peer(connection)
        await peer.request_mtu(247)
        await peer.discover_services()
        stream = None
        for service in peer.services:
            await service.discover_characteristics()
            for characteristic in service.characteristics:
                if characteristic.uuid == UUID(STREAM):
                    stream = characteristic
        if stream is None:
            raise RuntimeError(f"{address} has no {STREAM}")
        await stream.discover_descriptors()
        await stream.subscribe(on_value)
        try:
            await asyncio.wait_for(done.wait(), 60)
        except asyncio.TimeoutError:
            pass
        cpu = cpu_seconds(pid) - cpu_before
        await connection.disconnect()
        return {
            "first_ms": (first - started) * 1000 if first else float("nan"),
            "per_second": (received - 1) / (last - first) if received > 1 and last > first else float("nan"),
            "cpu_us": cpu / received * 1e6 if received else float("nan"),
            "received": received,
        }


async def wait_ready(process: subprocess.Popen, word: str, timeout: float = 30) -> None:
    """Until the server says `word`; its output is then drained on a thread (a full pipe would stall it)."""
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()

    def drain():
        for line in process.stdout:
            if word in line:
                loop.call_soon_threadsafe(ready.set)

    threading.Thread(target=drain, daemon=True).start()
    await asyncio.wait_for(ready.wait(), timeout)


async def bench(args) -> int:
    link = ConnectionAddressedLink()
    ports = []
    servers = []
    for index in range(2):
        server = TcpHostServer(HostPort(f"A{index}", link, f"A0:A0:A0:00:02:{index + 1:02X}", False))
        ports.append(await server.start("127.0.0.1", 0))
        servers.append(server)
    central = Central(link)
    await central.device.power_on()
    results = {"hwprobe": [], "bumble": []}
    for round_index in range(args.rounds):
        for name in ("hwprobe", "bumble"):
            if name == "hwprobe":
                command = [args.hwprobe, "serve", "--hci", f"tcp:127.0.0.1:{ports[0]}",
                           f"stream?count={args.count}&size={args.size}&advertising=extended", "--json"]
                ready, address = '"advertising"', HWPROBE_ADDRESS
            else:
                command = [sys.executable, os.path.abspath(__file__), "--bumble-server", f"tcp-client:127.0.0.1:{ports[1]}",
                           "--count", str(args.count), "--size", str(args.size)]
                ready, address = "READY", BUMBLE_ADDRESS
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
            try:
                await wait_ready(process, ready)
                await asyncio.sleep(0.3)  # the first advertising event
                result = await central.measure(address, process.pid, args.count)
            finally:
                process.terminate()
                process.wait(timeout=10)
            results[name].append(result)
            print(f"round {round_index + 1} {name:8} first value {result['first_ms']:7.1f} ms  "
                  f"{result['per_second']:8.0f} notifications/s  {result['cpu_us']:7.1f} µs CPU each  ({result['received']} received)",
                  flush=True)
    for server in servers:
        server.close()

    def median(name, key):
        return statistics.median(r[key] for r in results[name])

    print()
    print(f"{'':28}{'hwprobe serve':>15}{'bumble':>12}{'ratio':>9}")
    for key, label, unit in (("first_ms", "connect to first value", "ms"), ("per_second", "notifications served", "/s"),
                             ("cpu_us", "CPU per notification", "µs")):
        ours, theirs = median("hwprobe", key), median("bumble", key)
        print(f"{label:28}{ours:12.1f} {unit:2}{theirs:9.1f} {unit:2}{ours / theirs:9.3f}")
    if args.guard:
        # For scripts/bench-guard: the serving process's CPU per notification over bumble's, and
        # how many values reached the central (all of them, or the stream stalled).
        print(f"ratio serve.notification-cpu {median('hwprobe', 'cpu_us') / median('bumble', 'cpu_us'):.4f}")
        print(f"read serve.notifications {min(r['received'] for r in results['hwprobe'])} {args.count}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hwprobe", default=os.path.join(HERE, "..", "..", ".build", "release", "hwprobe"))
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--guard", action="store_true", help="also print the figures scripts/bench-guard compares")
    parser.add_argument("--bumble-server", metavar="TRANSPORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger("bumble").setLevel(logging.ERROR)
    if args.bumble_server:
        asyncio.run(bumble_server(args.bumble_server, args.count, args.size))
        return 0
    return asyncio.run(bench(args))


if __name__ == "__main__":
    sys.exit(main())
