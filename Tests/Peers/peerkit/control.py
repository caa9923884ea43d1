"""The control channel: newline-delimited JSON commands on a TCP port, one JSON answer each.

Every answer has "ok": true plus the command's fields, or "ok": false and "error".
"""
from __future__ import annotations

import asyncio
import json
import logging

log = logging.getLogger("peer.control")


def _int(value, default=None) -> int:
    if value is None:
        if default is None:
            raise ValueError("missing integer")
        return default
    if isinstance(value, str):
        return int(value, 0)
    return int(value)


def _hex(value) -> bytes:
    return bytes.fromhex((value or "").replace(" ", "").replace(":", ""))


class ControlServer:
    def __init__(self, peripheral, host_ports: dict, on_quit=None):
        self.peripheral = peripheral
        self.host_ports = host_ports  # name -> HostPort ('tcp', maybe 'pty')
        self.on_quit = on_quit
        self.server = None
        self.clients: set[asyncio.StreamWriter] = set()

    async def start(self, host: str, port: int) -> int:
        self.server = await asyncio.start_server(self._client, host, port)
        return self.server.sockets[0].getsockname()[1]

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for writer in list(self.clients):
            writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.clients.add(writer)
        subscription = None
        try:
            while line := await reader.readline():
                line = line.strip()
                if not line:
                    continue
                answer = await self.handle_line(line)
                subscribe = answer.pop("_subscribe", False)
                writer.write(json.dumps(answer).encode() + b"\n")
                if subscribe and subscription is None:
                    # From here on this client also gets every event as a JSON line of its own
                    # ({"event": …}), after the ones it asked to catch up on.
                    subscription = self._subscribe(writer)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # client gone, or the peer is shutting down
        finally:
            if subscription is not None:
                events = self.peripheral.events
                if subscription in events.subscribers:
                    events.subscribers.remove(subscription)
            self.clients.discard(writer)
            writer.close()

    def _subscribe(self, writer: asyncio.StreamWriter):
        def send(event: dict) -> None:
            if writer.is_closing():
                raise ConnectionError("subscriber gone")
            writer.write(json.dumps(event).encode() + b"\n")
        self.peripheral.events.subscribers.append(send)
        return send

    async def handle_line(self, line: bytes) -> dict:
        try:
            request = json.loads(line)
            command = request["cmd"]
            handler = getattr(self, "cmd_" + command, None)
            behavior = getattr(self.peripheral, "behavior", None)
            if handler is None and behavior is not None:
                handler = behavior.commands.get(command)
            if handler is None:
                handler = getattr(self.peripheral, "commands", {}).get(command)
            if handler is None:
                raise ValueError(f"unknown command {command!r}")
            result = handler(request)
            if asyncio.iscoroutine(result):
                result = await result
            answer = {"ok": True, **(result or {})}
            if command == "subscribe":
                answer["_subscribe"] = True
            return answer
        except Exception as error:
            log.info("control: %s failed: %s", line[:200], error)
            return {"ok": False, "error": f"{type(error).__name__}: {error}"}

    def _port(self, request):
        name = request.get("port")
        if name is None:  # the port a host is attached to, TCP first
            for candidate in ("tcp", "pty", "vhci"):
                port = self.host_ports.get(candidate)
                if port is not None and port.writer is not None:
                    return port
            raise RuntimeError("no host attached")
        return self.host_ports[name]

    # -- peripheral side -------------------------------------------------------------------
    def cmd_database(self, request):
        # {"ok": true, "database": <exactly what `hwprobe gatt --json` prints>}
        return {"database": self.peripheral.database()}

    def cmd_state(self, request):
        state = self.peripheral.state()
        state["hosts"] = {name: {"attached": port.writer is not None,
                                 "powerCycles": port.power_cycles,
                                 "muted": [f"0x{op:04X}" for op in sorted(port.muted)]}
                          for name, port in self.host_ports.items()}
        return state

    async def cmd_events(self, request):
        """Events since index `since`, optionally waiting for one (`EventLog.query`)."""
        return await self.peripheral.events.query(request)

    def cmd_subscribe(self, request):
        """The answer carries the events so far (from `since`, default the end: none); the
        connection then streams each new one (handled in _client)."""
        events = self.peripheral.events
        since = _int(request.get("since"), len(events.events))
        return {"events": events.since(since), "next": len(events.events)}

    def cmd_writes(self, request):
        writes = list(self.peripheral.profile.writes)
        if request.get("clear"):
            self.peripheral.profile.writes.clear()
        return {"writes": writes}

    async def cmd_notify(self, request):
        return await self.peripheral.notify(_int(request.get("count"), 1), _int(request.get("size"), 20),
                                            bool(request.get("force", False)))

    async def cmd_indicate(self, request):
        return await self.peripheral.indicate(_int(request.get("count"), 1), _int(request.get("size"), 4))

    async def cmd_disconnect(self, request):
        return await self.peripheral.disconnect(_int(request.get("reason"), 0x13))

    def cmd_blackhole(self, request):
        self.peripheral.blackhole = bool(request.get("on", True))
        return {"blackhole": self.peripheral.blackhole}

    def cmd_delay(self, request):
        self.peripheral.delay_s = max(0, _int(request.get("ms"), 0)) / 1000
        return {"delayMs": round(self.peripheral.delay_s * 1000)}

    def cmd_raw_att(self, request):
        return self.peripheral.raw_l2cap(0x0004, _hex(request.get("hex")))

    def cmd_raw_l2cap(self, request):
        return self.peripheral.raw_l2cap(_int(request.get("cid")), _hex(request.get("hex")))

    def cmd_raw_acl(self, request):
        return self.peripheral.raw_acl(_hex(request.get("hex")))

    async def cmd_advertise(self, request):
        return await self.peripheral.set_advertising_data(_hex(request.get("data_hex")))

    # -- host side (controller A) ----------------------------------------------------------
    def cmd_garbage_h4(self, request):
        data = _hex(request.get("hex"))
        port = self._port(request)
        port.inject(data)
        return {"sent": len(data), "port": port.name}

    def cmd_mute_controller(self, request):
        opcode = _int(request.get("opcode"))
        on = bool(request.get("on", True))
        names = [request["port"]] if "port" in request else list(self.host_ports)
        for name in names:
            muted = self.host_ports[name].muted
            if on:
                muted.add(opcode)
            else:
                muted.discard(opcode)
        return {"opcode": f"0x{opcode:04X}", "on": on}

    def cmd_power_cycle(self, request):
        port = self.host_ports[request.get("port", "tcp")]
        port.power_cycle()
        return {"powerCycles": port.power_cycles}

    def cmd_quit(self, request):
        if self.on_quit is not None:
            asyncio.get_running_loop().call_soon(self.on_quit)
        return {}
