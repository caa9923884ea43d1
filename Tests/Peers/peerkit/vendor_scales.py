"""Vendor-protocol scale profiles (issue 18): QN / Yolanda, LeFu / ICOMON (MGB), … Each family
is a small class on `VendorScale`, which does the bumble side: the CCCD watching, notifications,
writes with their checks, the faults, and the control commands shared by every family:

  {"cmd": "vendor_weigh", "kg": 72.35, "unstable": 3}   weigh now (unstable frames, then stable ones)
  {"cmd": "vendor_fault", "fault": "refuse"|"silent"|"clear"}   refuse the handshake write with ATT
        0x80, or never answer it (never send the opening frame); cleared by a disconnection
  {"cmd": "vendor_unit", "unit": "kg"|"lb"}   what the scale itself is set to show

The byte layouts are in each class's docstring with their sources, and in ../README.md.
"""
from __future__ import annotations

import asyncio
import logging
import struct

from bumble import att
from bumble.core import AdvertisingData
from bumble.gatt import Characteristic, CharacteristicValue, Service

from . import profiles as _p

log = logging.getLogger("peer.vendor")
P = Characteristic.Properties
ERR_REFUSED = 0x80  # an application error: "not now"
UNSTABLE = [0.31, 0.77, 0.96, 1.004]  # fractions of the final weight while the person settles


class VendorScale(_p.Behavior):
    """Shared machinery. A family sets `self.chars` (name -> Characteristic), implements
    `on_subscribed(name)` and `on_write(name, value)`, and `weighing(kg, unstable)`."""

    def __init__(self, speed: float):
        super().__init__()
        self.speed = speed if speed and speed > 0 else 10.0
        self.chars: dict[str, Characteristic] = {}
        self.connection = None
        self.tasks: set[asyncio.Task] = set()
        self.sent: list[dict] = []
        self.written: list[dict] = []
        self.faults: set[str] = set()
        self.unit = "kg"
        self.handshake_done = False
        self.commands = {"vendor_weigh": self.cmd_weigh, "vendor_fault": self.cmd_fault, "vendor_unit": self.cmd_unit}

    @property
    def step_s(self) -> float:
        return 2.0 / self.speed  # a frame every 2 life seconds: 0.2 s at --speed 10

    # -- bumble plumbing -----------------------------------------------------------------
    def spawn(self, coroutine):
        async def guard():
            try:
                await coroutine
            except asyncio.CancelledError:
                pass
            except Exception:
                log.exception("vendor scale")
        task = asyncio.get_running_loop().create_task(guard())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def subscribed(self, name: str) -> bool:
        if self.connection is None:
            return False
        cccd = self.peripheral.device.gatt_server.subscribers.get(self.connection, {}).get(self.chars[name].handle)
        return bool(cccd) and bool(cccd[0] & 0x03)

    def on_connection(self, connection) -> None:
        self.connection = connection
        self.handshake_done = False
        self.spawn(self._watch(connection))

    def on_disconnection(self, connection, reason) -> None:
        if connection is self.connection:
            self.connection = None
            self.faults.clear()
            for task in list(self.tasks):
                task.cancel()

    async def _watch(self, connection) -> None:
        was: dict[str, bool] = {}
        while self.connection is connection:
            for name in self.chars:
                now = self.subscribed(name)
                if now and not was.get(name, False):
                    self.spawn(self.on_subscribed(name))
                was[name] = now
            await asyncio.sleep(0.02)

    async def send(self, name: str, value: bytes) -> None:
        """Notifies (or indicates, by the characteristic's properties) one value."""
        if not self.subscribed(name):
            raise RuntimeError(f"central has not subscribed to {name}")
        characteristic = self.chars[name]
        if characteristic.properties & P.INDICATE and not characteristic.properties & P.NOTIFY:
            await self.peripheral.device.indicate_subscriber(self.connection, characteristic, value)
        else:
            await self.peripheral.device.notify_subscriber(self.connection, characteristic, value)
        self.sent.append({"characteristic": name, "hex": value.hex()})
        del self.sent[:-60]

    def writer(self, name: str):
        def write(connection, value):
            value = bytes(value)
            self.written.append({"characteristic": name, "hex": value.hex()})
            del self.written[:-60]
            if "refuse" in self.faults:
                raise att.ATT_Error(ERR_REFUSED)
            self.on_write(name, value)
        return write

    def characteristic(self, uuid: str, name: str, properties) -> Characteristic:
        if properties & (P.WRITE | P.WRITE_WITHOUT_RESPONSE):
            value = CharacteristicValue(read=_p._deny_read, write=self.writer(name))
        else:
            value = CharacteristicValue(read=_p._deny_read)
        characteristic = Characteristic(uuid, properties, _p.READABLE | _p.WRITEABLE, value)
        self.chars[name] = characteristic
        return characteristic

    # -- what a family provides ----------------------------------------------------------
    async def on_subscribed(self, name: str) -> None:
        pass

    def on_write(self, name: str, value: bytes) -> None:
        pass

    async def weighing(self, kg: float, unstable: int) -> None:
        pass

    def begin_weighing(self, kg: float = 72.35, unstable: int = len(UNSTABLE)) -> None:
        self.spawn(self.weighing(kg, unstable))

    def series(self, kg: float, unstable: int) -> list[tuple[float, bool]]:
        """The weights a person's weighing shows: `unstable` settling ones, then the final one stable, twice."""
        fractions = UNSTABLE[-unstable:] if unstable > 0 else []
        return [(round(kg * f, 2), False) for f in fractions] + [(kg, True), (kg, True)]

    # -- control commands ----------------------------------------------------------------
    def cmd_weigh(self, request: dict) -> dict:
        if self.connection is None:
            raise RuntimeError("no central connected")
        kg = float(request.get("kg", 72.35))
        unstable = int(request.get("unstable", len(UNSTABLE)))
        self.begin_weighing(kg, unstable)
        return {"kg": kg, "unstable": unstable, "stepMs": round(self.step_s * 1000)}

    def cmd_fault(self, request: dict) -> dict:
        fault = request.get("fault")
        if fault == "clear":
            self.faults.clear()
        elif fault in ("refuse", "silent"):
            self.faults.add(fault)
        else:
            raise ValueError(f"unknown fault {fault!r}")
        return {"faults": sorted(self.faults)}

    def cmd_unit(self, request: dict) -> dict:
        unit = request.get("unit")
        if unit not in ("kg", "lb"):
            raise ValueError("unit is kg or lb")
        self.unit = unit
        return {"unit": unit}

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()

    def state(self) -> dict:
        return {"vendor": {"sent": self.sent[-30:], "written": self.written[-30:], "faults": sorted(self.faults),
                           "unit": self.unit, "handshakeDone": self.handshake_done}}


def _advertising(name: str, uuid16: int) -> bytes:
    ad = _p._ad((AdvertisingData.FLAGS, bytes([0x06])),
                (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", uuid16)),
                (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()))
    assert len(ad) <= 31, len(ad)
    return ad


# ---------------------------------------------------------------------------------------
# QN / Yolanda, layout FFE0 (openScale QNHandler.kt, BluetoothQNScale.java)
def qn_frame(opcode: int, protocol_type: int, body: bytes) -> bytes:
    """opcode, whole length, protocol type, body, checksum (low byte of the sum before it)."""
    head = bytes([opcode, len(body) + 4, protocol_type]) + body
    return head + bytes([sum(head) & 0xFF])


def qn_ok(value: bytes) -> bool:
    return len(value) >= 4 and value[1] == len(value) and sum(value[:-1]) & 0xFF == value[-1]


class QNScale(VendorScale):
    """The FFE0 layout: FFE1 notify (frames), FFE2 indicate, FFE3 write (unit), FFE4 write (time).

    On FFE1 subscription the scale sends its 0x12 information frame (protocol type 0x15, byte 10
    = 1: hundredths). The unit setting `13 09 15 <unit> 10 00 00 00 <sum>` on FFE3 is answered
    with a 0x14 frame; the time `20 08 15 <u32 LE seconds since 2000> <sum>` on FFE4 completes the
    handshake, and the scale starts weighing: 0x10 frames `10 0D 15 <weight u16 BE, hundredths of
    a kg> <stable 0/1> <resistance u16 BE> <resistance u16 BE> 00 00 <sum>`, 0.2 s apart. The
    weight is in kilograms whatever unit is set (QN scales convert on their display). A write
    that fails its length or checksum is refused with ATT 0x13 (Value Not Allowed)."""

    PROTOCOL_TYPE = 0x15

    def __init__(self, speed: float):
        super().__init__(speed)
        self.requested_unit: int | None = None

    async def on_subscribed(self, name: str) -> None:
        if name != "frames" or "silent" in self.faults:
            return
        await asyncio.sleep(0.05)
        await self.send("frames", qn_frame(0x12, self.PROTOCOL_TYPE, bytes([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0])))

    def on_write(self, name: str, value: bytes) -> None:
        if not qn_ok(value):
            raise att.ATT_Error(att.ATT_VALUE_NOT_ALLOWED_ERROR if hasattr(att, "ATT_VALUE_NOT_ALLOWED_ERROR") else 0x13)
        if name == "unit" and value[0] == 0x13:
            self.requested_unit = value[3]
            self.unit = "lb" if value[3] == 0x02 else "kg"
            self.spawn(self.send("frames", qn_frame(0x14, self.PROTOCOL_TYPE, bytes(7))))
        elif name == "time" and value[0] == 0x20:
            self.handshake_done = True
            self.begin_weighing()

    async def weighing(self, kg: float, unstable: int) -> None:
        for weight, stable in self.series(kg, unstable):
            raw = int(round(weight * 100))
            body = struct.pack(">HB", raw, 1 if stable else 0) + struct.pack(">HH", 500, 496) + bytes(2)
            await self.send("frames", qn_frame(0x10, self.PROTOCOL_TYPE, body))
            await asyncio.sleep(self.step_s)

    def state(self) -> dict:
        state = super().state()
        state["vendor"]["requestedUnit"] = self.requested_unit
        return state


def qn(speed: float = 10.0) -> _p.Profile:
    behavior = QNScale(speed)
    service = Service("FFE0", [behavior.characteristic("FFE1", "frames", P.NOTIFY),
                               behavior.characteristic("FFE2", "indications", P.INDICATE),
                               behavior.characteristic("FFE3", "unit", P.WRITE),
                               behavior.characteristic("FFE4", "time", P.WRITE)])
    ad = _advertising("QN-Scale", 0xFFE0)
    return _p.Profile(name="qn", device_name="QN-Scale", services=[service], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={}, writes=[], behavior=behavior)


def qn_broadcast_data(kg: float, stable: bool, address: bytes = bytes.fromhex("C1B0B0000002")) -> bytes:
    """QNHandlerBroadcast.kt: manufacturer 0xFFFF, `AA BB`, the address, status at 15 (bit 5
    stable), weight u16 LE hundredths of a kg at 17–18; 19 bytes after the company ID."""
    data = bytearray(b"\xAA\xBB" + address + bytes(11))
    data[15] = 0x20 if stable else 0x00
    data[17:19] = struct.pack("<H", int(round(kg * 100)))
    return bytes(data)


class QNBroadcast(VendorScale):
    """A broadcast-only QN scale: each reading replaces the advertisement (no name, as the
    ES-CS20M variant 3 sends ADV_NONCONN_IND without services), 0.5 s apart at --speed 10."""

    def __init__(self, speed: float):
        super().__init__(speed)
        self.commands = {"vendor_weigh": self.cmd_weigh}

    def advertising(self, kg: float, stable: bool) -> bytes:
        ad = _p._ad((AdvertisingData.FLAGS, bytes([0x06])),
                    (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, struct.pack("<H", 0xFFFF) + qn_broadcast_data(kg, stable)))
        assert len(ad) <= 31, len(ad)
        return ad

    @property
    def step_s(self) -> float:
        return 5.0 / self.speed

    def cmd_weigh(self, request: dict) -> dict:
        kg = float(request.get("kg", 72.35))
        unstable = int(request.get("unstable", len(UNSTABLE)))
        self.begin_weighing(kg, unstable)
        return {"kg": kg, "unstable": unstable, "stepMs": round(self.step_s * 1000)}

    async def weighing(self, kg: float, unstable: int) -> None:
        for weight, stable in self.series(kg, unstable):
            data = self.advertising(weight, stable)
            self.sent.append({"advertisement": data.hex(), "kg": weight, "stable": stable})
            await self.peripheral.set_advertising_data(data)
            await asyncio.sleep(self.step_s)


def qn_broadcast(speed: float = 10.0) -> _p.Profile:
    behavior = QNBroadcast(speed)
    ad = behavior.advertising(0.0, False)
    return _p.Profile(name="qn-broadcast", device_name="", services=[], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={}, writes=[], behavior=behavior)


# ---------------------------------------------------------------------------------------
# LeFu / ICOMON "MGB" (openScale BluetoothMGB.java, MGBHandler.kt)
def mgb_ok(value: bytes) -> bool:
    return (len(value) == 8 and value[0] == 0xAC and value[1] == 0x02 and value[6] == 0xCC
            and sum(value[2:7]) & 0xFF == value[7])


def mgb_result(kg: float, fat: float, height_m: float = 1.78) -> list[bytes]:
    """The two 20-byte result notifications: `AC 02 FF 00 02 21 yy mm dd hh mm ss` + weight, BMI,
    fat (tenths, big-endian) + `00 00`; then `01 00` + muscle %, BMR, bone kg, water % (tenths,
    big-endian), age, protein, and the unknown tail BluetoothMGB.java notes (`00 01 1b a5 02 47`)."""
    tenths = lambda v: struct.pack(">H", int(round(v * 10)))  # noqa: E731
    bmi = kg / (height_m * height_m)
    first = bytes([0xAC, 0x02, 0xFF, 0x00, 0x02, 0x21, 26, 12, 2, 3, 15, 9]) + tenths(kg) + tenths(bmi) + tenths(fat) + bytes(2)
    second = (bytes([0x01, 0x00]) + tenths(45.2) + tenths(160.0) + tenths(3.0) + tenths(53.0) + bytes([30])
              + tenths(18.0) + bytes([0x00, 0x01, 0x1B, 0xA5, 0x02]))
    second += bytes(20 - len(second))
    assert len(first) == 20 and len(second) == 20
    return [first, second]


class IcomonScale(VendorScale):
    """Service FFB0: FFB1 write (8-byte configuration packets `AC 02 c0 c1 c2 c3 CC sum`), FFB2
    notify (results). Once the last packet (`FE 06 unit 00`) is written the person steps on and
    the scale sends its result (no live weights: none of the sources shows any). A packet whose
    framing or checksum is wrong is refused with ATT 0x13."""

    def __init__(self, speed: float):
        super().__init__(speed)
        self.configured: list[str] = []

    def on_write(self, name: str, value: bytes) -> None:
        if not mgb_ok(value):
            raise att.ATT_Error(0x13)
        self.configured.append(value[2:6].hex())
        if value[2] == 0xFE:
            self.unit = {1: "kg", 2: "lb", 3: "st"}.get(value[4], "?")
            self.handshake_done = True
            self.begin_weighing(72.3)  # whole tenths: the protocol's resolution

    async def weighing(self, kg: float, unstable: int) -> None:
        if "silent" in self.faults:
            return
        await asyncio.sleep(self.step_s * 3)  # the person steps on and stands still
        for value in mgb_result(kg, 18.4):
            await self.send("results", value)

    def state(self) -> dict:
        state = super().state()
        state["vendor"]["configured"] = self.configured[-12:]
        return state


def icomon(speed: float = 10.0) -> _p.Profile:
    behavior = IcomonScale(speed)
    service = Service("FFB0", [behavior.characteristic("FFB1", "configuration", P.WRITE),
                               behavior.characteristic("FFB2", "results", P.NOTIFY)])
    ad = _advertising("Swan", 0xFFB0)
    return _p.Profile(name="icomon", device_name="Swan", services=[service], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={}, writes=[], behavior=behavior)


# ---------------------------------------------------------------------------------------
# 1byone / Eufy (openScale OneByoneHandler.kt)
def onebyone_frame(kg: float, impedance: float | None, when: tuple | None = None) -> bytes:
    """`CF`, impedance tenths of an ohm (low byte, high byte), weight u16 LE hundredths of a kg,
    four unknown bytes, byte 9 = 1 for "no impedance", one more; with `when` (a stored
    measurement) the time follows: year u16 BE, month, day, hour, minute, second (18 bytes)."""
    z = int(round(impedance * 10)) if impedance is not None else 0
    frame = bytes([0xCF, z & 0xFF, z >> 8]) + struct.pack("<H", int(round(kg * 100))) + bytes(4) \
        + bytes([1 if impedance is None else 0, 0])
    if when is not None:
        year, month, day, hour, minute, second = when
        frame += struct.pack(">H", year) + bytes([month, day, hour, minute, second])
    return frame


class OneByoneScale(VendorScale):
    """Service FFF0: FFF1 write (commands), FFF4 notify (frames). `FD 37 unit group 00×6 xor`
    sets the unit (refused with ATT 0x13 when the XOR is wrong); the clock `F1 yyyy mm dd hh mm
    ss` is acknowledged `F1 00`; `F2 00` is answered with two stored measurements (18-byte CF
    frames) and `F2 00`, after which the person steps on: CF frames without impedance while
    settling, then the final one with impedance, twice. `F2 01` (erase the history) is noted."""

    def __init__(self, speed: float):
        super().__init__(speed)
        self.erased = False
        self.requested_unit: int | None = None

    def on_write(self, name: str, value: bytes) -> None:
        if value[:2] == b"\xFD\x37":
            x = 0
            for b in value[:-1]:
                x ^= b
            if len(value) != 11 or x != value[-1]:
                raise att.ATT_Error(0x13)
            self.requested_unit = value[2]
            self.unit = {0: "kg", 1: "lb", 2: "st"}.get(value[2], "?")
        elif value[:1] == b"\xF1" and len(value) == 8:
            if "silent" not in self.faults:
                self.spawn(self.send("frames", b"\xF1\x00"))
        elif value == b"\xF2\x00":
            self.spawn(self._history())
        elif value == b"\xF2\x01":
            self.erased = True

    async def _history(self) -> None:
        for kg, when in ((80.15, (2026, 11, 30, 7, 1, 2)), (79.9, (2026, 12, 1, 7, 3, 4))):
            await self.send("frames", onebyone_frame(kg, 480.0, when))
        await self.send("frames", b"\xF2\x00")
        self.handshake_done = True
        self.begin_weighing()

    async def weighing(self, kg: float, unstable: int) -> None:
        await asyncio.sleep(self.step_s)
        for weight, stable in self.series(kg, unstable):
            await self.send("frames", onebyone_frame(weight, 500.3 if stable else None))
            await asyncio.sleep(self.step_s)

    def state(self) -> dict:
        state = super().state()
        state["vendor"].update({"erased": self.erased, "requestedUnit": self.requested_unit})
        return state


def onebyone(speed: float = 10.0) -> _p.Profile:
    behavior = OneByoneScale(speed)
    service = Service("FFF0", [behavior.characteristic("FFF1", "commands", P.WRITE),
                               behavior.characteristic("FFF4", "frames", P.NOTIFY)])
    ad = _advertising("eufy T9146", 0xFFF0)
    return _p.Profile(name="onebyone", device_name="eufy T9146", services=[service], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={}, writes=[], behavior=behavior)


# ---------------------------------------------------------------------------------------
# Yunmai (openScale BluetoothYunmaiSE_Mini.java, YunmaiHandler.kt)
def yunmai_ok(value: bytes) -> bool:
    x = 0
    for b in value[1:-1]:
        x ^= b
    return len(value) >= 4 and value[0] == 0x0D and value[1] == len(value) and x == value[-1]


def yunmai_frame(kg: float, final: bool, fat: float = 18.4, resistance: int = 512, unix: int = 0x692E6A40) -> bytes:
    """`0D 1E 14 <type: 1 live, 2 final> 00 <time u32 BE> …` weight u16 BE hundredths of a kg at
    13, resistance u16 BE at 15, fat u16 BE hundredths of a percent at 17 (version 0x1E and up);
    20 bytes. Neither source reads live frames, so only their type byte is filled in here."""
    frame = bytearray(20)
    frame[0:5] = bytes([0x0D, 0x1E, 0x14, 0x02 if final else 0x01, 0x00])
    if final:
        frame[5:9] = struct.pack(">I", unix)
        frame[13:19] = struct.pack(">HHH", int(round(kg * 100)), resistance, int(round(fat * 100)))
    return bytes(frame)


class YunmaiScale(VendorScale):
    """Services FFE0 (FFE4 notify) and FFE5 (FFE9 write). Commands `0D len cmd … xor` (XOR of
    all after the 0D; a wrong length byte or XOR is refused with ATT 0x13): user 0x10, time
    0x11, start 0x13. After start, live frames while the person settles, then the final one."""

    def __init__(self, speed: float):
        super().__init__(speed)
        self.commands_seen: list[str] = []

    def on_connection(self, connection) -> None:
        super().on_connection(connection)
        self.commands_seen = []  # per connection: what this central sent

    def on_write(self, name: str, value: bytes) -> None:
        if not yunmai_ok(value):
            raise att.ATT_Error(0x13)
        self.commands_seen.append(f"{value[2]:02x}")
        if value[2] == 0x10:
            self.unit = "lb" if value[15] == 2 else "kg"
        elif value[2] == 0x13:
            self.handshake_done = True
            self.begin_weighing()

    async def weighing(self, kg: float, unstable: int) -> None:
        if "silent" in self.faults:
            return
        await asyncio.sleep(self.step_s)
        for weight, stable in self.series(kg, unstable):
            await self.send("measurements", yunmai_frame(weight, final=stable))
            await asyncio.sleep(self.step_s)

    def state(self) -> dict:
        state = super().state()
        state["vendor"]["commands"] = self.commands_seen[-12:]
        return state


def yunmai(speed: float = 10.0) -> _p.Profile:
    behavior = YunmaiScale(speed)
    measurement = Service("FFE0", [behavior.characteristic("FFE4", "measurements", P.NOTIFY)])
    command = Service("FFE5", [behavior.characteristic("FFE9", "commands", P.WRITE)])
    ad = _advertising("YUNMAI-ISM2", 0xFFE0)
    return _p.Profile(name="yunmai", device_name="YUNMAI-ISM2", services=[measurement, command], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={}, writes=[], behavior=behavior)


# ---------------------------------------------------------------------------------------
# Beurer / Sanitas / SilverCrest, legacy (openScale BeurerSanitasHandler.kt)
class BeurerSanitasScale(VendorScale):
    """Service FFE0 with one characteristic FFE1 (write + notify). The Sanitas start byte 0xE7
    (its "alternative" forms 0xE6 init, 0xE9 time). Init `E6 01` is answered `E6 00`; the time
    `E9 <u32 BE>` is not answered; the status `E7 4F <8-byte user id>` is answered `E7 F0 4F 00
    <battery 80> <thresholds 05 05> <unit> 00 00 00 11` with the unit the scale is set to
    (`vendor_unit`: 1 kg, 2 lb); `E7 4D <unit>` is answered `E7 F0 4D 00`. Then the person steps
    on: weight-only frames `E7 58 <0 stable / 1 settling> <weight u16 BE, 50 g units>`."""

    START = 0xE7

    def __init__(self, speed: float):
        super().__init__(speed)
        self.unit_changes: list[int] = []

    def on_write(self, name: str, value: bytes) -> None:
        if value[:1] == bytes([self.START & 0xF0 | 6]) and "silent" not in self.faults:
            self.spawn(self.send("scale", bytes([self.START & 0xF0 | 6, 0x00])))
        elif value[:2] == bytes([self.START, 0x4F]):
            code = 2 if self.unit == "lb" else 1
            status = bytes([self.START, 0xF0, 0x4F, 0x00, 80, 5, 5, code, 0, 0, 0, 0x11])
            self.spawn(self._then_weigh(status, weigh=True))
        elif value[:2] == bytes([self.START, 0x4D]) and len(value) == 3:
            self.unit_changes.append(value[2])
            self.unit = "lb" if value[2] == 2 else "kg"
            self.spawn(self.send("scale", bytes([self.START, 0xF0, 0x4D, 0x00])))

    async def _then_weigh(self, status: bytes, weigh: bool) -> None:
        await self.send("scale", status)
        self.handshake_done = True
        if weigh:
            self.begin_weighing()

    async def weighing(self, kg: float, unstable: int) -> None:
        await asyncio.sleep(self.step_s * 2)
        for weight, stable in self.series(kg, unstable):
            raw = int(round(weight * 1000 / 50))
            await self.send("scale", bytes([self.START, 0x58, 0 if stable else 1]) + struct.pack(">H", raw))
            await asyncio.sleep(self.step_s)

    def state(self) -> dict:
        state = super().state()
        state["vendor"]["unitChanges"] = self.unit_changes[-12:]
        return state


def beurer(speed: float = 10.0) -> _p.Profile:
    behavior = BeurerSanitasScale(speed)
    service = Service("FFE0", [behavior.characteristic("FFE1", "scale", P.WRITE | P.NOTIFY)])
    ad = _advertising("SANITAS SBF70", 0xFFE0)
    return _p.Profile(name="beurer", device_name="SANITAS SBF70", services=[service], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={}, writes=[], behavior=behavior)
