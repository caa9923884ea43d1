#!/usr/bin/env python3
"""bumble's host as the central, for tests of `hwprobe serve` (our host as the peripheral).

One LocalLink (the fixed one, peerkit.link) with:
  * N controllers A, each on a TCP server, for hwprobe processes (`--hci tcp:127.0.0.1:PORT`):
    the first for `hwprobe serve`, the others for hwprobe as a central (`hwprobe check`);
  * controller C with a bumble Device as the central, driven through the control port;
  * with --mirror, controller B with the mirror peer (peerkit's mirror profile, the one ble_peer.py
    serves) at B0:B0:B0:00:00:01, for `hwprobe relay` between C and B (tests/relay: one link, four
    controllers; the link routes by each connection's own addresses, so the two links stay apart);
  * with --secure, one more peripheral: the `secure` profile (values that need an encrypted link;
    Just Works pairing, bonding) at B0:B0:B0:00:00:02.

Prints once ready:
    READY tcp=127.0.0.1:PORT[,PORT…] control=127.0.0.1:PORT

Control commands (one JSON object per line, one JSON answer each; "ok": true or false with "error"):
  {"cmd": "scan", "seconds": S}                  -> {"devices": [{"address", "name", "data"}]}
  {"cmd": "connect", "address": "AA:…[/random]", "timeout": S}
  {"cmd": "mtu", "mtu": N}                       -> {"mtu"}
  {"cmd": "discover"}                            -> {"characteristics": [{"uuid", "handle", "properties"}]}
  {"cmd": "read", "uuid": U}                     -> {"value": HEX} (or "att_error": code)
  {"cmd": "write", "uuid": U, "value": HEX, "response": true} -> {} (or "att_error")
  {"cmd": "subscribe", "uuid": U, "indicate": false}
  {"cmd": "values", "uuid": U, "count": N, "timeout": S} -> {"values": [HEX…]} once N arrived (or the timeout)
  {"cmd": "mirror_scan", "height_mm": 1800, "timeout": S} -> the mirror-v1 client's body scan
        (mirror-gatt-v1.md, "The scan"): {"states": [...], "result": HEX, "seconds": S}
  {"cmd": "disconnect"}
  {"cmd": "link", "timeout": S}                   -> {"connected": bool, "ended_ago": S|null}: waits up to S for the
        central's link to end, and says when it did (seconds before the answer)
  {"cmd": "mirror_drop", "reason": 0x13}         -> the mirror peer ends its link (--mirror)
  {"cmd": "secure_notify", "count": N, "size": S} / {"cmd": "secure_indicate", "count": N}
        -> the secure peripheral (--secure) notifies / indicates its generic characteristics
  {"cmd": "secure_writes"}                       -> {"writes": [{"characteristic", "uuid", "hex"}]}: what it was written
  {"cmd": "quit"}

With `--pairing` the central pairs, with the fixed Security Manager of peerkit/pairing.py
(`PairingCentral`; README.md, "Pairing"), and these commands are added:
  {"cmd": "pair"}                                -> PairingCentral.pair(): {"paired", "method", …} or the reason
  {"cmd": "encrypt"}                             -> encrypt with the bond's key, no pairing
  {"cmd": "secure_read", "uuid": U}              -> read; on 0x05/0x0F secure the link (bond or pairing)
                                                    and read again: {"value"} or {"attError"}, "attErrors"
  {"cmd": "events", "since": N, "wait": NAME|[…], "match": {…}, "timeout": S} -> as ble_peer.py's
  and ble_peer.py's `pairing`, `pairing_fault`, `passkey`, `compare`, `security`, `bonds`.

It runs until stdin closes, SIGTERM/SIGINT or "quit". Standard bumble 0.0.236 (pinned: it
reaches no internals beyond what peerkit already does).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bumble import hci  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.core import UUID  # noqa: E402
from bumble.device import Device, DeviceConfiguration, Peer  # noqa: E402
from bumble.gatt_client import CharacteristicProxy  # noqa: E402
from bumble.host import Host  # noqa: E402

from peerkit.hostside import HostPort, TcpHostServer  # noqa: E402
from peerkit.link import ConnectionAddressedLink  # noqa: E402
from peerkit.pairing import PairingOptions  # noqa: E402
from peerkit.pairing_central import PairingCentral  # noqa: E402
from peerkit.pairing_control import pairing_commands  # noqa: E402

log = logging.getLogger("peer.central")

MIRROR = "7B9E00{:02X}-3C2A-4F1B-9E6D-5A4C3B2A1F00"
STATES = ["idle", "warmingUp", "ready", "scanning", "stepOff", "processing", "complete", "error"]


def mirror_uuid(n: int) -> str:
    return MIRROR.format(n)


def uuid_key(uuid: UUID) -> str:
    """One spelling per UUID, whether it was made from 16 bits or from text."""
    return uuid.to_bytes(force_128=True).hex()


def address_from(text: str) -> hci.Address:
    kind = hci.Address.RANDOM_DEVICE_ADDRESS if text.endswith("/random") else hci.Address.PUBLIC_DEVICE_ADDRESS
    return hci.Address(text.split("/")[0], kind)


class Central:
    def __init__(self, link, pairing: bool = False):
        # The address type must be given: bumble's Address defaults to random, and controller C
        # then tells the peripheral's controller that a *random* C0:C0:C0:00:00:01 connected
        # while its host (Read BD_ADDR) pairs as the public one: a DHKey check that cannot match.
        self.controller = Controller("C", link=link, public_address=hci.Address("C0:C0:C0:00:00:01", hci.Address.PUBLIC_DEVICE_ADDRESS))
        config = DeviceConfiguration()
        config.name = "bumble-central"
        config.address = hci.Address("C3:C0:C0:00:00:01")
        self.device = Device(config=config, host=Host(controller_source=self.controller, controller_sink=self.controller))
        self.connection = None
        self.peer: Peer | None = None
        self.characteristics: dict[str, CharacteristicProxy] = {}
        self.received: dict[str, list[bytes]] = {}
        self.arrived = asyncio.Event()
        # The fixed Security Manager, only when asked: without it bumble's stock one answers.
        self.pairing = PairingCentral(self.device, PairingOptions()) if pairing else None

    async def start(self):
        await self.device.power_on()

    # -- commands ----------------------------------------------------------------------
    async def scan(self, seconds: float) -> dict:
        seen: dict[str, dict] = {}

        def on_advertisement(advertisement):
            name = advertisement.data.get(0x09) or advertisement.data.get(0x08)
            seen[str(advertisement.address)] = {
                "address": str(advertisement.address),
                "name": name.decode(errors="replace") if isinstance(name, bytes) else name,
                "data": bytes(advertisement.data).hex(),
            }

        self.device.on("advertisement", on_advertisement)
        await self.device.start_scanning(filter_duplicates=False)
        await asyncio.sleep(seconds)
        await self.device.stop_scanning()
        self.device.remove_listener("advertisement", on_advertisement)
        return {"devices": list(seen.values())}

    async def connect(self, address: str, timeout: float) -> dict:
        started = time.monotonic()
        self.connection = await asyncio.wait_for(
            self.device.connect(address_from(address), own_address_type=hci.OwnAddressType.PUBLIC), timeout)
        self.ended_at = None
        connection = self.connection

        def on_disconnection(_reason):
            if self.connection is connection:
                self.ended_at = time.monotonic()
        connection.on("disconnection", on_disconnection)
        self.peer = Peer(self.connection)
        self.characteristics = {}
        self.received = {}
        if self.pairing is not None:
            self.pairing.connection = self.connection
            self.pairing.peer = self.peer
            self.pairing._discovered = False
        return {"seconds": round(time.monotonic() - started, 4), "handle": self.connection.handle}

    async def mtu(self, mtu: int) -> dict:
        return {"mtu": await self.peer.request_mtu(mtu)}

    async def discover(self) -> dict:
        await self.peer.discover_services()
        out = []
        for service in self.peer.services:
            await service.discover_characteristics()
            for characteristic in service.characteristics:
                await characteristic.discover_descriptors()
                key = uuid_key(characteristic.uuid)
                self.characteristics.setdefault(key, characteristic)
                out.append({"service": str(service.uuid).upper(), "uuid": key, "handle": characteristic.handle,
                            "properties": int(characteristic.properties)})
        return {"characteristics": out}

    def characteristic(self, uuid: str) -> CharacteristicProxy:
        key = uuid_key(UUID(uuid))
        if key not in self.characteristics:
            raise KeyError(f"no characteristic {uuid} (discover first)")
        return self.characteristics[key]

    async def read(self, uuid: str) -> dict:
        try:
            return {"value": bytes(await self.characteristic(uuid).read_value()).hex()}
        except Exception as error:  # bumble raises ATT_Error with error_code
            code = getattr(error, "error_code", None)
            if code is None:
                raise
            return {"att_error": code}

    async def write(self, uuid: str, value: str, response: bool) -> dict:
        try:
            await self.characteristic(uuid).write_value(bytes.fromhex(value), with_response=response)
            return {}
        except Exception as error:
            code = getattr(error, "error_code", None)
            if code is None:
                raise
            return {"att_error": code}

    async def subscribe(self, uuid: str, indicate: bool) -> dict:
        key = uuid_key(UUID(uuid))
        self.received.setdefault(key, [])

        def on_value(value, key=key):
            self.received[key].append(bytes(value))
            self.arrived.set()

        await self.characteristic(uuid).subscribe(on_value, prefer_notify=not indicate)
        return {}

    async def values(self, uuid: str, count: int, timeout: float) -> dict:
        key = uuid_key(UUID(uuid))
        deadline = time.monotonic() + timeout
        while len(self.received.get(key, [])) < count and time.monotonic() < deadline:
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                break
        return {"values": [v.hex() for v in self.received.get(key, [])]}

    async def wait_for(self, uuid: str, predicate, timeout: float, what: str) -> bytes:
        """The first value of `uuid` (already received or still to come) that `predicate` takes."""
        key = uuid_key(UUID(uuid))
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            values = self.received.get(key, [])
            for value in values[seen:]:
                if predicate(value):
                    return value
            seen = len(values)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"timed out waiting for {what}")
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def mirror_scan(self, height_mm: int, timeout: float) -> dict:
        """The mirror-v1 client's scan, written from mirror-gatt-v1.md ("The scan")."""
        started = time.monotonic()
        await self.discover()
        info = bytes(await self.characteristic(mirror_uuid(2)).read_value())
        for n in (5, 6, 7):
            await self.subscribe(mirror_uuid(n), indicate=False)
        await self.wait_for(mirror_uuid(7), lambda v: len(v) == 3 and v[2] & 1, timeout, "alignment")
        await self.characteristic(mirror_uuid(8)).write_value(b"\x01", with_response=True)
        await self.characteristic(mirror_uuid(3)).write_value(bytes([1]) + height_mm.to_bytes(2, "little") + b"\x00",
                                                              with_response=True)
        await self.characteristic(mirror_uuid(4)).write_value(bytes(range(16)), with_response=True)
        await self.wait_for(mirror_uuid(5), lambda v: v[0] == 2, timeout, "ready")
        await self.wait_for(mirror_uuid(6), lambda v: len(v) == 3 and v[0] & 0x06 == 0x06, timeout, "on the scale and stable")
        await self.characteristic(mirror_uuid(8)).write_value(b"\x02", with_response=True)
        final = await self.wait_for(mirror_uuid(5), lambda v: v[0] in (6, 7), timeout, "complete")
        states = []
        for value in self.received[uuid_key(UUID(mirror_uuid(5)))]:
            name = STATES[value[0]] if value[0] < len(STATES) else str(value[0])
            if not states or states[-1] != name:
                states.append(name)
        answer = {"info": info.hex(), "states": states, "seconds": round(time.monotonic() - started, 3)}
        if final[0] == 6:
            answer["result"] = bytes(await self.characteristic(mirror_uuid(9)).read_value()).hex()
        else:
            answer["error_code"] = final[2]
        return answer

    async def link(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while self.connection is not None and getattr(self, "ended_at", None) is None and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        ended = getattr(self, "ended_at", None)
        return {"connected": self.connection is not None and ended is None,
                "ended_ago": None if ended is None else round(time.monotonic() - ended, 4)}

    async def disconnect(self) -> dict:
        if getattr(self, "ended_at", None) is not None:
            self.connection = None
        if self.connection is not None:
            await self.connection.disconnect()
            self.connection = None
            if self.pairing is not None:
                self.pairing.connection = None
                self.pairing.peer = None
        return {}



async def handle_pairing(central: Central, request: dict):
    """The `--pairing` commands; None when `request` is not one of them."""
    if central.pairing is None:
        return None
    cmd = request.get("cmd")
    if cmd == "pair":
        return await central.pairing.pair()
    if cmd == "encrypt":
        return await central.pairing.encrypt()
    if cmd == "secure_read":
        return await central.pairing.read(request["uuid"])
    if cmd == "events":
        return await central.pairing.events.query(request)
    handler = pairing_commands(central.pairing.agent, lambda: central.connection).get(cmd)
    return handler(request) if handler is not None else None


async def handle(central: Central, request: dict, stop: asyncio.Event, mirror=None, secure=None) -> dict:
    cmd = request.get("cmd")
    paired = await handle_pairing(central, request)
    if paired is not None:
        return paired
    if cmd == "link":
        return await central.link(float(request.get("timeout", 0)))
    if cmd == "mirror_drop":
        if mirror is None:
            raise ValueError("no mirror peer: start with --mirror")
        return await mirror.disconnect(int(request.get("reason", 0x13)))
    if cmd in ("secure_notify", "secure_indicate", "secure_writes"):
        if secure is None:
            raise ValueError("no secure peripheral: start with --secure")
        if cmd == "secure_notify":
            return await secure.notify(int(request.get("count", 1)), int(request.get("size", 4)))
        if cmd == "secure_indicate":
            return await secure.indicate(int(request.get("count", 1)))
        return {"writes": list(secure.profile.writes)}
    if cmd == "scan":
        return await central.scan(float(request.get("seconds", 2)))
    if cmd == "connect":
        return await central.connect(request["address"], float(request.get("timeout", 10)))
    if cmd == "mtu":
        return await central.mtu(int(request.get("mtu", 247)))
    if cmd == "discover":
        return await central.discover()
    if cmd == "read":
        return await central.read(request["uuid"])
    if cmd == "write":
        return await central.write(request["uuid"], request.get("value", ""), bool(request.get("response", True)))
    if cmd == "subscribe":
        return await central.subscribe(request["uuid"], bool(request.get("indicate", False)))
    if cmd == "values":
        return await central.values(request["uuid"], int(request.get("count", 1)), float(request.get("timeout", 5)))
    if cmd == "mirror_scan":
        return await central.mirror_scan(int(request.get("height_mm", 1800)), float(request.get("timeout", 30)))
    if cmd == "disconnect":
        return await central.disconnect()
    if cmd == "quit":
        stop.set()
        return {}
    raise ValueError(f"unknown command {cmd!r}")


async def run(args) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    link = ConnectionAddressedLink()
    servers = []
    ports = []
    for index in range(args.hosts):
        port = HostPort(f"A{index}", link, f"A0:A0:A0:00:01:{index + 1:02X}", False)
        server = TcpHostServer(port)
        ports.append(await server.start("127.0.0.1", 0))
        servers.append(server)
    central = Central(link, pairing=args.pairing)
    await central.start()
    mirror = None
    if args.mirror:
        from peerkit.peripheral import Peripheral
        from peerkit.profiles import PROFILES
        mirror = Peripheral(link, PROFILES["mirror"](speed=args.speed), "B0:B0:B0:00:00:01", random=False,
                            extended=True, interval_ms=50)
        await mirror.start()
    secure = None
    if args.secure:
        from peerkit.pairing import PairingOptions
        from peerkit.peripheral import Peripheral
        from peerkit.profiles import PROFILES
        secure = Peripheral(link, PROFILES["secure"](), "B0:B0:B0:00:00:02", random=False, extended=True, interval_ms=50,
                            pairing=PairingOptions())
        await secure.start()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                if not line.strip():
                    continue
                try:
                    request = json.loads(line)
                    answer = {"ok": True, **(await handle(central, request, stop, mirror, secure))}
                except Exception as error:  # a test wants the reason, whatever failed
                    log.exception("command failed")
                    answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
                writer.write(json.dumps(answer).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    control = await asyncio.start_server(client, "127.0.0.1", 0)
    control_port = control.sockets[0].getsockname()[1]
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def stdin_readable():
        try:
            data = os.read(sys.stdin.fileno(), 4096)
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(sys.stdin.fileno())
            stop.set()
    try:
        loop.add_reader(sys.stdin.fileno(), stdin_readable)
    except (ValueError, OSError, PermissionError):
        pass

    print(f"READY tcp={','.join(f'127.0.0.1:{p}' for p in ports)} control=127.0.0.1:{control_port}", flush=True)
    await stop.wait()
    control.close()
    for server in servers:
        server.close()
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=1, help="controllers A on TCP for hwprobe processes")
    parser.add_argument("--mirror", action="store_true", help="also the mirror peer (controller B) on the link, for relay tests")
    parser.add_argument("--speed", type=float, default=10.0, help="the mirror peer's speed factor")
    parser.add_argument("--secure", action="store_true", help="also the secure profile's peripheral, for relay tests")
    parser.add_argument("--pairing", action="store_true",
                        help="pair with the fixed Security Manager (peerkit/pairing.py) and add its commands")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    args = parser.parse_args(argv)
    level = logging.WARNING if args.verbose == 0 else logging.INFO if args.verbose == 1 else logging.DEBUG
    logging.basicConfig(stream=sys.stderr, level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.verbose < 2:
        logging.getLogger("bumble").setLevel(logging.ERROR if args.verbose == 0 else logging.WARNING)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
