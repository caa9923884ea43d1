"""Scale profiles: standard Weight Scale (`scale`), Body Composition (`bcs`) and the Xiaomi
broadcasting scales (`miscale`, `miscale2`). Byte layouts: see ../README.md.
"""
from __future__ import annotations

import asyncio
import datetime
import logging
import struct

from bumble.core import AdvertisingData
from bumble.gatt import Characteristic, CharacteristicValue, Service

from . import profiles as _p

log = logging.getLogger("peer.scales")
P = Characteristic.Properties

HEIGHT_M = 1.78
USER_ID = 1
DEFAULT_SERIES_KG = [70.0, 72.3, 72.35]
LB_PER_KG = 2.2046226218
IN_PER_M = 39.37007874

# Weight Scale Feature (0x2A9E): bit 0 time stamp, bit 1 multiple users, bit 2 BMI,
# bits 3-6 weight resolution (7 = 0.005 kg / 0.01 lb), bits 7-9 height resolution (3 = 0.001 m / 0.1 in)
WS_FEATURE = 0x01 | 0x02 | 0x04 | (7 << 3) | (3 << 7)  # 0x000001BF
# Body Composition Feature (0x2A9B): bits 0-10 time stamp, multiple users, basal metabolism,
# muscle %, muscle mass, fat free mass, soft lean mass, body water mass, impedance, weight, height;
# bits 11-14 mass resolution (7 = 0.005 kg), bits 15-17 height resolution (3 = 0.001 m)
BC_FEATURE = 0x7FF | (7 << 11) | (3 << 15)  # 0x0001BFFF

# Body Composition Measurement (0x2A9C) flags
BCM_IMPERIAL, BCM_TIME_STAMP, BCM_USER_ID, BCM_BASAL, BCM_MUSCLE_PCT = 0x1, 0x2, 0x4, 0x8, 0x10
BCM_MUSCLE_MASS, BCM_FAT_FREE, BCM_SOFT_LEAN, BCM_WATER, BCM_IMPEDANCE = 0x20, 0x40, 0x80, 0x100, 0x200
BCM_WEIGHT, BCM_HEIGHT, BCM_MULTIPLE_PACKET = 0x400, 0x800, 0x1000

DEFAULT_BODY = {"kg": 72.35, "fat": 18.4, "basalKJ": 7000, "musclePct": 45.2, "muscleKg": 32.7,
                "fatFreeKg": 59.04, "softLeanKg": 55.6, "waterKg": 42.1, "impedance": 500.0}


def date_time(now: datetime.datetime | None = None) -> bytes:
    now = now or datetime.datetime.now()
    return struct.pack("<HBBBBB", now.year, now.month, now.day, now.hour, now.minute, now.second)


def weight_measurement(kg: float, imperial: bool = False, height_m: float = HEIGHT_M,
                       user_id: int = USER_ID, now=None) -> bytes:
    """Weight Measurement 0x2A9D with flags 0x0E (time stamp, user id, BMI + height), | 0x01 imperial."""
    flags = 0x0E | (0x01 if imperial else 0x00)
    if imperial:
        weight = int(round(kg * LB_PER_KG / 0.01))
        height = int(round(height_m * IN_PER_M / 0.1))
    else:
        weight = int(round(kg / 0.005))
        height = int(round(height_m / 0.001))
    bmi = int(round(kg / (height_m * height_m) * 10))
    return (struct.pack("<BH", flags, weight) + date_time(now) + bytes([user_id])
            + struct.pack("<HH", bmi, height))


def bcm_packets(body: dict, split: bool = True, now=None) -> list[bytes]:
    """Body Composition Measurement (0x2A9C), SI units, all fields.

    Split (Multiple Packet Measurement, flags bit 12 in *both* packets, each packet's flags
    naming only the fields it carries, Body Fat Percentage mandatory in each):
      1: flags 0x107E, body fat, time stamp, user id, basal metabolism, muscle %, muscle mass,
         fat free mass (20 bytes = ATT_MTU 23 - 3)
      2: flags 0x1F80, body fat, soft lean mass, body water mass, impedance, weight, height (14 bytes)
    Unsplit: one 30-byte value with flags 0x0FFE.
    """
    mass = lambda kg: int(round(kg / 0.005))  # noqa: E731
    fat = int(round(body["fat"] * 10))
    first_flags = BCM_TIME_STAMP | BCM_USER_ID | BCM_BASAL | BCM_MUSCLE_PCT | BCM_MUSCLE_MASS | BCM_FAT_FREE
    first_fields = (date_time(now) + bytes([USER_ID])
                    + struct.pack("<HHHH", int(body["basalKJ"]), int(round(body["musclePct"] * 10)),
                                  mass(body["muscleKg"]), mass(body["fatFreeKg"])))
    second_flags = BCM_SOFT_LEAN | BCM_WATER | BCM_IMPEDANCE | BCM_WEIGHT | BCM_HEIGHT
    second_fields = struct.pack("<HHHHH", mass(body["softLeanKg"]), mass(body["waterKg"]),
                                int(round(body["impedance"] * 10)), mass(body["kg"]),
                                int(round(HEIGHT_M / 0.001)))
    if not split:
        return [struct.pack("<HH", first_flags | second_flags, fat) + first_fields + second_fields]
    return [struct.pack("<HH", first_flags | BCM_MULTIPLE_PACKET, fat) + first_fields,
            struct.pack("<HH", second_flags | BCM_MULTIPLE_PACKET, fat) + second_fields]


class _Subscriptions(_p.Behavior):
    """Runs `on_subscribed(name)` each time the central turns indications on for a watched
    characteristic (CCCD polled every 20 ms: bumble handles the CCCD itself)."""

    def __init__(self):
        super().__init__()
        self.watched: dict[str, Characteristic] = {}
        self.connection = None
        self.tasks: set[asyncio.Task] = set()
        self.sent: list[dict] = []

    def spawn(self, coroutine):
        async def guard():
            try:
                await coroutine
            except asyncio.CancelledError:
                pass
            except Exception:
                log.exception("scale simulation")
        task = asyncio.get_running_loop().create_task(guard())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def indicating(self, characteristic) -> bool:
        if self.connection is None:
            return False
        cccd = self.peripheral.device.gatt_server.subscribers.get(self.connection, {}).get(characteristic.handle)
        return bool(cccd) and bool(cccd[0] & 0x02)

    def on_connection(self, connection) -> None:
        self.connection = connection
        self.spawn(self._watch(connection))

    def on_disconnection(self, connection, reason) -> None:
        if connection is self.connection:
            self.connection = None
            self.close()

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()

    async def _watch(self, connection) -> None:
        was = {name: False for name in self.watched}
        while self.connection is connection:
            for name, characteristic in self.watched.items():
                now = self.indicating(characteristic)
                if now and not was[name]:
                    self.spawn(self.on_subscribed(name))
                was[name] = now
            await asyncio.sleep(0.02)

    async def on_subscribed(self, name: str) -> None:
        pass

    async def indicate(self, name: str, values: list[bytes], gap_s: float = 0.0) -> int:
        characteristic = self.watched[name]
        if not self.indicating(characteristic):
            raise RuntimeError(f"central has not enabled indications on {name}")
        for i, value in enumerate(values):
            if i and gap_s:
                await asyncio.sleep(gap_s)
            await self.peripheral.device.indicate_subscriber(self.connection, characteristic, value)
            self.sent.append({"characteristic": name, "hex": value.hex()})
        return len(values)

    def state(self) -> dict:
        return {"indicated": list(self.sent[-20:])}


class ScaleBehavior(_Subscriptions):
    def __init__(self, speed: float, series: list[float], with_bcs: bool):
        super().__init__()
        self.speed = speed if speed and speed > 0 else 10.0
        self.series = series
        self.with_bcs = with_bcs
        self.commands = {"weigh": self.cmd_weigh}
        if with_bcs:
            self.commands["bcs_measure"] = self.cmd_bcs_measure

    @property
    def gap_s(self) -> float:
        return 2.0 / self.speed  # readings 2 s apart in life

    async def on_subscribed(self, name: str) -> None:
        if name == "weight":
            await self.indicate("weight", [weight_measurement(kg) for kg in self.series], self.gap_s)
        elif name == "bcs":
            await self.indicate("bcs", bcm_packets(DEFAULT_BODY))

    async def cmd_weigh(self, request: dict) -> dict:
        kgs = request.get("kg", DEFAULT_SERIES_KG)
        kgs = [float(k) for k in (kgs if isinstance(kgs, list) else [kgs])]
        imperial = bool(request.get("imperial", False))
        values = [weight_measurement(kg, imperial) for kg in kgs]
        count = await self.indicate("weight", values, float(request.get("gap_ms", self.gap_s * 1000)) / 1000)
        return {"indicated": count, "hex": [v.hex() for v in values]}

    async def cmd_bcs_measure(self, request: dict) -> dict:
        body = dict(DEFAULT_BODY)
        for key in body:
            if key in request:
                body[key] = float(request[key])
        values = bcm_packets(body, split=bool(request.get("split", True)))
        mtu = self.connection.att_mtu if self.connection is not None else 23
        if any(len(v) > mtu - 3 for v in values):
            raise RuntimeError(f"a {max(map(len, values))}-byte value does not fit ATT_MTU {mtu} - 3")
        count = await self.indicate("bcs", values)
        return {"indicated": count, "hex": [v.hex() for v in values]}


def _weight_scale_service(behavior: ScaleBehavior) -> tuple[Service, Characteristic]:
    feature = Characteristic("2A9E", P.READ, _p.READABLE, struct.pack("<I", WS_FEATURE))
    measurement = Characteristic("2A9D", P.INDICATE, _p.READABLE, CharacteristicValue(read=_p._deny_read))
    behavior.watched["weight"] = measurement
    return Service("181D", [feature, measurement]), measurement


def _flags():
    return (AdvertisingData.FLAGS, bytes([0x06]))


def scale(speed: float = 10.0) -> _p.Profile:
    behavior = ScaleBehavior(speed, DEFAULT_SERIES_KG, with_bcs=False)
    service, measurement = _weight_scale_service(behavior)
    name = "WS Scale"
    ad = _p._ad(_flags(), (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x181D)),
                (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()))
    return _p.Profile(name="scale", device_name=name, services=[service], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={"indicate": measurement}, writes=[],
                      behavior=behavior)


def bcs(speed: float = 10.0) -> _p.Profile:
    behavior = ScaleBehavior(speed, [DEFAULT_BODY["kg"]], with_bcs=True)
    ws, weight = _weight_scale_service(behavior)
    feature = Characteristic("2A9B", P.READ, _p.READABLE, struct.pack("<I", BC_FEATURE))
    measurement = Characteristic("2A9C", P.INDICATE, _p.READABLE, CharacteristicValue(read=_p._deny_read))
    behavior.watched["bcs"] = measurement
    bc = Service("181B", [feature, measurement])
    name = "BC Scale"
    ad = _p._ad(_flags(), (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
                           struct.pack("<HH", 0x181B, 0x181D)),
                (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()))
    return _p.Profile(name="bcs", device_name=name, services=[bc, ws], legacy_advertising_data=ad,
                      extended_advertising_data=ad, roles={"indicate": measurement, "weight": weight},
                      writes=[], behavior=behavior)


# ---------------------------------------------------------------------------------------
# Xiaomi broadcasting scales (service data in the advertisement, no connection needed)
MI_UNSTABLE = [0.17, 0.49, 0.85, 0.98, 1.0035, 0.9993]  # fractions of the final weight


def mi_bfs_frame(kg: float, stable: bool, impedance: int | None, removed: bool, now=None) -> bytes:
    """Mi Body Composition Scale 2 (XMTZC05HM), service data under 0x181B, 13 bytes:
    ctrl0 (0x02: bit 0 = lb, clear = kg), ctrl1 (bit 1 impedance present, bit 2 always set here,
    bit 5 stabilised, bit 7 load removed; bit 6 = catty/"date invalid", never set here),
    year u16, month, day, hour, minute, second, impedance u16 (ohm), weight u16 (kg x 200)."""
    ctrl1 = 0x04 | (0x20 if stable else 0) | (0x02 if impedance is not None else 0) | (0x80 if removed else 0)
    return (bytes([0x02, ctrl1]) + date_time(now)
            + struct.pack("<HH", impedance if impedance is not None else 0, int(round(kg * 200))))


def mi_scale2_frame(kg: float, stable: bool, removed: bool, now=None) -> bytes:
    """Mi Smart Scale 2 (XMTZC02HM/04HM), service data under 0x181D, 10 bytes: ctrl (bit 0 lb,
    bit 1 set here, bit 4 catty, bit 5 stabilised, bit 7 load removed), weight u16 (kg x 200),
    year u16, month, day, hour, minute, second."""
    ctrl = 0x02 | (0x20 if stable else 0) | (0x80 if removed else 0)
    return bytes([ctrl]) + struct.pack("<H", int(round(kg * 200))) + date_time(now)


class MiScaleBehavior(_p.Behavior):
    def __init__(self, speed: float, service_uuid: int, name: str, body_composition: bool):
        super().__init__()
        self.speed = speed if speed and speed > 0 else 10.0
        self.service_uuid = service_uuid
        self.name = name
        self.body_composition = body_composition
        self.task: asyncio.Task | None = None
        self.frames: list[dict] = []
        self.current: dict | None = None
        self.commands = {"mi_weigh": self.cmd_weigh}

    @property
    def step_s(self) -> float:
        return 5.0 / self.speed  # a new reading every 5 life seconds: 0.5 s at --speed 10

    def advertising_data(self, frame: bytes) -> bytes:
        return _p._ad(_flags(), (AdvertisingData.SERVICE_DATA_16_BIT_UUID,
                                 struct.pack("<H", self.service_uuid) + frame),
                      (AdvertisingData.COMPLETE_LOCAL_NAME, self.name.encode()))

    def frame(self, kg, stable, impedance, removed) -> bytes:
        if self.body_composition:
            return mi_bfs_frame(kg, stable, impedance, removed)
        return mi_scale2_frame(kg, stable, removed)

    async def start(self) -> None:
        self._begin(72.35, 500)

    def _begin(self, kg: float, impedance: int | None) -> None:
        if self.task is not None:
            self.task.cancel()
        self.task = asyncio.get_running_loop().create_task(self._weighing(kg, impedance))

    async def _weighing(self, kg: float, impedance: int | None) -> None:
        try:
            steps = [(round(kg * f * 200) / 200, False, None, False, "measuring") for f in MI_UNSTABLE]
            steps.append((kg, True, None, False, "stable"))
            if self.body_composition and impedance is not None:
                steps += [(kg, True, impedance, False, "stableWithImpedance")] * 2
            steps.append((kg, True, impedance if self.body_composition else None, True, "loadRemoved"))
            for kg_now, stable, imp, removed, phase in steps:
                data = self.frame(kg_now, stable, imp, removed)
                self.current = {"phase": phase, "kg": round(kg_now, 3), "stable": stable,
                                "impedance": imp, "removed": removed, "serviceDataHex": data.hex()}
                self.frames.append(self.current)
                del self.frames[:-30]
                await self.peripheral.set_advertising_data(self.advertising_data(data))
                if phase != "loadRemoved":
                    await asyncio.sleep(self.step_s)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("mi scale weighing")

    async def cmd_weigh(self, request: dict) -> dict:
        kg = float(request.get("kg", 72.35))
        impedance = request.get("impedance", 500)
        self._begin(kg, None if impedance is None else int(impedance))
        return {"kg": kg, "impedance": impedance, "stepMs": round(self.step_s * 1000)}

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def state(self) -> dict:
        return {"mi": {"current": self.current, "recent": self.frames[-12:]}}


def _mi(name: str, device_name: str, uuid16: int, body_composition: bool, speed: float) -> _p.Profile:
    behavior = MiScaleBehavior(speed, uuid16, device_name, body_composition)
    initial = behavior.advertising_data(behavior.frame(0.0, False, None, True))
    assert len(initial) <= 31, len(initial)
    return _p.Profile(name=name, device_name=device_name, services=[], legacy_advertising_data=initial,
                      extended_advertising_data=initial, roles={}, writes=[], behavior=behavior)


def miscale(speed: float = 10.0) -> _p.Profile:
    return _mi("miscale", "MIBFS", 0x181B, True, speed)


def miscale2(speed: float = 10.0) -> _p.Profile:
    return _mi("miscale2", "MI SCALE2", 0x181D, False, speed)
