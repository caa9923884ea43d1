"""Profile `mirror`: the body-scan mirror GATT profile v1 (docs/mirror-gatt-v1.md).

A simulated person and turntable scale drive the mirror's state machine. All durations below
are "life" seconds, divided by the peer's speed factor (`--speed`, default 10).
"""
from __future__ import annotations

import asyncio
import logging
import struct

from bumble import att
from bumble.core import UUID, AdvertisingData
from bumble.gatt import Characteristic, CharacteristicValue, Service

from . import profiles as _p

log = logging.getLogger("peer.mirror")

MIRROR_BASE = "7B9E{:04X}-3C2A-4F1B-9E6D-5A4C3B2A1F00"
MIRROR_SERVICE = MIRROR_BASE.format(0x0001)
MIRROR_NAME = "Mirror 4F2A"
MIRROR_SERIAL = bytes.fromhex("00004F2A")
MIRROR_MANUFACTURER = struct.pack("<H", 0xFFFF) + b"MR" + bytes([1]) + MIRROR_SERIAL
MIRROR_VERSION = 1
MIRROR_FIRMWARE = (1, 4, 2)
MIRROR_BATTERY = 76
MIRROR_HEIGHT_MM = 1780

IDS = {"deviceInfo": 0x02, "init": 0x03, "scanToken": 0x04, "scanState": 0x05, "scale": 0x06,
       "alignment": 0x07, "control": 0x08, "result": 0x09}

STATES = ["idle", "warmingUp", "ready", "scanning", "stepOff", "processing", "complete", "error"]
IDLE, WARMING_UP, READY, SCANNING, STEP_OFF, PROCESSING, COMPLETE, ERROR = range(8)

SCALE_PRESENT, SCALE_OCCUPIED, SCALE_STABLE, SCALE_LEVEL = 0x01, 0x02, 0x04, 0x08

# The simulated person and scale (life seconds).
T_SCALE_PRESENT = 0.8          # after connection
ALIGNMENT_READINGS = [(0.0, -14, 78), (1.0, -6, 62), (2.0, -1, 51)]  # after the scale is present
T_WARM_UP = 3.0
T_STEP_ON = 1.5                # after ready
T_SETTLE = 1.2                 # from stepping on to stable
T_SCALE_TICK = 0.2             # scale notifications while occupied (5/s)
T_SCAN = 5.0                   # 0 -> 100 %, a notification every 5 %
T_STEP_OFF = 1.5               # person leaves after stepOff
T_PROCESSING = 3.0             # 0 -> 100 %
PERSON_KG = 72.35
RESULT = {"scanId": 40213, "kg": 72.35, "bodyFat": 18.4, "points": 412388}
SUBSCRIBE_GRACE = 2.0          # real seconds the scale waits for a `scale` subscription

# ATT errors of the profile
ERR_NOT_ALIGNED, ERR_NO_INIT, ERR_NOT_READY = 0x80, 0x81, 0x82
ERR_VALUE_NOT_ALLOWED = 0x13
ERR_LENGTH = att.ATT_INVALID_ATTRIBUTE_LENGTH_ERROR  # 0x0D
ERR_READ_NOT_PERMITTED = att.ATT_READ_NOT_PERMITTED_ERROR  # 0x02


def kg_units(kg: float) -> int:
    return int(round(kg / 0.005))


# Faults that fire when the mirror enters a given state (`state`, then `after_ms`).
STATE_FAULTS = ("disconnect", "error", "silence", "stall", "malformed")
ATT_CID = 0x0004


def state_index(name) -> int:
    if isinstance(name, int):
        return name
    for i, s in enumerate(STATES):
        if s.lower() == str(name).lower():
            return i
    raise ValueError(f"unknown state {name!r} (one of {', '.join(STATES)})")


class MirrorBehavior(_p.Behavior):
    def __init__(self, speed: float):
        super().__init__()
        self.speed = speed if speed and speed > 0 else 10.0
        self.chars: dict[str, Characteristic] = {}
        self.faults: dict[str, dict] = {}
        self.deviations: set[str] = set()
        self.fired: list[str] = []
        # Faults that took effect since the peer started (never cleared), so a soak can tell a
        # fault that did its damage from one that was armed but never struck.
        self.applied_total = 0
        self.connection = None
        self.tasks: set[asyncio.Task] = set()
        self.scan_task: asyncio.Task | None = None
        self.commands = {"mirror_fault": self.cmd_fault, "mirror_state": self.cmd_state}
        # stale-after-disconnect: the central left mid-scan; the next one finds an error.
        self.stale = False
        self._reset_all()

    # -- model ---------------------------------------------------------------------------
    def _reset_all(self) -> None:
        self.state_ = IDLE
        self.progress = 0
        self.error = 0
        self.initialized = False
        self.height_mm = None
        self.units = None
        self.token = None
        self.alignment_confirmed = False
        self.scale_flags = 0
        self.weight = 0
        self.angle, self.distance = ALIGNMENT_READINGS[0][1], ALIGNMENT_READINGS[0][2]
        self.silent = False
        # out-of-range: a battery of 150 %.
        self.battery = 150 if "out-of-range" in getattr(self, "deviations", ()) else MIRROR_BATTERY
        self.person_on = False

    @property
    def aligned(self) -> bool:
        return abs(self.angle) <= 3 and 40 <= self.distance <= 60

    def value(self, name: str) -> bytes:
        if name == "deviceInfo":
            if "battery" in self.faults:
                self.applied_total += 1  # a central reading the low battery is the fault striking
            battery = self.faults.get("battery", {}).get("battery", self.battery)
            return bytes([MIRROR_VERSION, *MIRROR_FIRMWARE, battery & 0xFF])
        if name == "scanState":
            progress = self.progress if self.state_ in (SCANNING, PROCESSING) else 0
            if self.state_ == READY and "progress-outside-scan" in self.deviations:
                progress = 50
            return bytes([self.state_, progress, self.error if self.state_ == ERROR else 0])
        if name == "scale":
            return struct.pack("<BH", self.scale_flags, self.weight)
        if name == "alignment":
            return struct.pack("<bBB", self.angle, self.distance, 0x01 if self.aligned else 0x00)
        if name == "result":
            if self.state_ != COMPLETE:
                raise att.ATT_Error(ERR_READ_NOT_PERMITTED)
            value = struct.pack("<IHHI", RESULT["scanId"], kg_units(RESULT["kg"]),
                                int(round(RESULT["bodyFat"] * 10)), RESULT["points"])
            return value[:8] if "short-result" in self.deviations else value
        raise att.ATT_Error(ERR_READ_NOT_PERMITTED)

    def _sec(self, life_seconds: float) -> float:
        return life_seconds / self.speed

    def _spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(self._guard(coroutine))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _guard(self, coroutine):
        try:
            await coroutine
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("mirror simulation")

    async def _sleep(self, life_seconds: float) -> None:
        await asyncio.sleep(self._sec(life_seconds))
        while self.silent:  # a silenced mirror also stops moving on
            await asyncio.sleep(0.05)

    def _notify(self, name: str) -> None:
        if self.silent or self.connection is None or self.peripheral is None:
            return
        value = self.value(name)
        if "notifies-unsubscribed" in self.deviations:
            # force: whether or not the central wrote the CCCD.
            self._spawn(self.peripheral.device.notify_subscriber(self.connection, self.chars[name], value, force=True))
            return
        self._spawn(self.peripheral.device.notify_subscribers(self.chars[name], value))

    def _subscribed(self, name: str) -> bool:
        if self.connection is None:
            return False
        cccd = self.peripheral.device.gatt_server.subscribers.get(self.connection, {}).get(
            self.chars[name].handle)
        return bool(cccd) and bool(cccd[0] & 0x01)

    def _enter(self, state: int, error: int = 0) -> None:
        self.state_ = state
        self.error = error
        if state not in (SCANNING, PROCESSING):
            self.progress = 0
        log.info("mirror: %s%s", STATES[state], f" (error {error})" if state == ERROR else "")
        if not (state == STEP_OFF and "skips-step-off" in self.deviations):
            self._notify("scanState")
        self._check_state_faults(state)

    def _set_scale(self, flags: int, weight: int | None = None) -> None:
        changed = flags != self.scale_flags
        self.scale_flags = flags
        if weight is not None:
            changed = changed or weight != self.weight
            self.weight = weight
        if changed or flags & SCALE_OCCUPIED:
            self._notify("scale")

    # -- faults --------------------------------------------------------------------------
    def _fire(self, name: str) -> dict | None:
        fault = self.faults.pop(name, None)
        if fault is not None:
            self.fired.append(name)
            log.info("mirror fault fires: %s %s", name, fault)
        return fault

    def _check_state_faults(self, state: int) -> None:
        for name in STATE_FAULTS:
            fault = self.faults.get(name)
            if fault is None or fault.get("stateIndex") != state:
                continue
            self._fire(name)
            self._spawn(self._run_fault(name, fault, state))

    async def _run_fault(self, name: str, fault: dict, state: int) -> None:
        await asyncio.sleep(fault.get("after_ms", 0) / 1000)
        if self.connection is None or self.state_ != state:
            return
        self.applied_total += 1
        if name == "disconnect":
            await self.connection.disconnect(reason=fault.get("reason", 0x08))
        elif name == "error":
            self._abort_scan()
            self._enter(ERROR, fault.get("code", 0xFF))
        elif name == "silence":
            self.silent = True
        elif name == "stall":
            # Silent for a while (real milliseconds), then carries on and repeats where it is.
            self.silent = True
            await asyncio.sleep(fault.get("ms", 500) / 1000)
            self.silent = False
            for characteristic in ("scale", "alignment", "scanState"):
                self._notify(characteristic)
        elif name == "malformed":
            self._send_malformed(fault.get("kind", "short_value"))

    def _send_malformed(self, kind: str) -> None:
        """Bytes a broken mirror might send; a robust central drops them and carries on."""
        if kind == "truncated_att":  # a Handle Value Notification cut inside its handle
            self.connection.send_l2cap_pdu(ATT_CID, bytes([0x1B, 0x05]))
        elif kind == "unknown_opcode":  # an ATT opcode nobody defined
            self.connection.send_l2cap_pdu(ATT_CID, bytes([0x7E, 0x01, 0x02]))
        elif kind == "short_value":  # a scanState value one byte long
            self._spawn(self.peripheral.device.notify_subscribers(self.chars["scanState"], b"\x01"))
        elif kind == "bad_state":  # a scanState naming no state of the profile
            self._spawn(self.peripheral.device.notify_subscribers(self.chars["scanState"], bytes([0xEE, 0, 0])))
        else:
            raise ValueError(f"unknown malformed kind {kind!r}")

    def delayed(self, handler):
        """Wraps a write handler: while a `delay_writes` fault lasts, the write response comes
        `ms` real milliseconds late (bumble awaits a handler that returns a coroutine)."""
        def write(connection, value):
            fault = self.faults.get("delay_writes")
            if fault is None:
                return handler(connection, value)
            fault["count"] -= 1
            if fault["count"] <= 0:
                self._fire("delay_writes")

            self.applied_total += 1

            async def late():
                await asyncio.sleep(fault["ms"] / 1000)
                if connection is not self.connection:
                    # The link that asked is gone: answering now would put a stale Write
                    # Response on whatever link has the same handle next.
                    raise asyncio.CancelledError()
                handler(connection, value)
            return late()
        return write

    # -- link ----------------------------------------------------------------------------
    def on_connection(self, connection) -> None:
        self._cancel_all()
        self._reset_all()
        self.connection = connection
        if self.stale:
            self.stale = False
            self.state_, self.error = ERROR, 5
        if "advertises-while-connected" in self.deviations:
            self._spawn(self._advertise_while_connected())
        self._spawn(self._scale_and_alignment())

    async def _advertise_while_connected(self) -> None:
        # The controller ends the set when a central connects; start it again at once.
        await asyncio.sleep(0.05)
        advertising_set = self.peripheral.advertising_set
        if advertising_set is not None and not advertising_set.enabled:
            await advertising_set.start()

    def on_disconnection(self, connection, reason: int) -> None:
        if connection is not self.connection:
            return
        if "stale-after-disconnect" in self.deviations and self.state_ in (SCANNING, STEP_OFF, PROCESSING):
            self.stale = True
        self.connection = None
        self._cancel_all()
        self._reset_all()
        if self.faults or self.fired:
            log.info("mirror: faults cleared on disconnection")
        self.faults.clear()
        self.fired.clear()

    def close(self) -> None:
        self._cancel_all()

    def _cancel_all(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        self.tasks.clear()
        self.scan_task = None

    def _abort_scan(self) -> None:
        if self.scan_task is not None:
            self.scan_task.cancel()
            self.scan_task = None

    # -- the simulated scale and person ----------------------------------------------------
    async def _scale_and_alignment(self) -> None:
        await self._sleep(T_SCALE_PRESENT)
        if "scale_never_present" in self.faults:
            self._fire("scale_never_present")
            self.applied_total += 1
            return
        # Do not let the scale appear before the client could have subscribed.
        deadline = asyncio.get_running_loop().time() + SUBSCRIBE_GRACE
        while not self._subscribed("scale") and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        self._set_scale(SCALE_PRESENT | SCALE_LEVEL, 0)
        previous = 0.0
        for at, angle, distance in ALIGNMENT_READINGS:
            await self._sleep(at - previous)
            previous = at
            if (angle, distance) != (self.angle, self.distance) or at == 0.0:
                self.angle, self.distance = angle, distance
                self._notify("alignment")

    async def _person_steps_on(self) -> None:
        await self._sleep(T_STEP_ON)
        if not self.scale_flags & SCALE_PRESENT:
            return
        self.person_on = True
        target = kg_units(PERSON_KG)
        ticks = max(1, int(round(T_SETTLE / T_SCALE_TICK)))
        for i in range(ticks):
            # unstable readings converging on the weight
            reading = int(target * (0.6 + 0.4 * (i + 1) / ticks)) + (37 if i % 2 else -23)
            self._set_scale(SCALE_PRESENT | SCALE_LEVEL | SCALE_OCCUPIED, max(0, reading))
            await self._sleep(T_SCALE_TICK)
        self._set_scale(SCALE_PRESENT | SCALE_LEVEL | SCALE_OCCUPIED | SCALE_STABLE, target)
        self._spawn(self._occupied_ticker())

    async def _occupied_ticker(self) -> None:
        while self.person_on and self.connection is not None:
            await self._sleep(T_SCALE_TICK)
            if self.person_on:
                self._set_scale(self.scale_flags, self.weight)

    def _person_steps_off(self) -> None:
        self.person_on = False
        self._set_scale(SCALE_PRESENT | SCALE_LEVEL, 0)

    async def _warm_up(self) -> None:
        self._enter(WARMING_UP)
        await self._sleep(T_WARM_UP)
        self._enter(READY)
        self._spawn(self._person_steps_on())

    async def _scan(self) -> None:
        self.progress = 0
        self._enter(SCANNING)
        step_off_at = self.faults.get("step_off_early", {}).get("progress")
        was_on = self.person_on
        for progress in range(5, 101, 5):
            await self._sleep(T_SCAN / 20)
            if step_off_at is not None and progress >= step_off_at:
                self._fire("step_off_early")
                self.applied_total += 1
                self._person_steps_off()
                self._enter(ERROR, 4)
                return
            if was_on and not self.person_on:  # left during the scan
                self._enter(ERROR, 4)
                return
            self.progress = progress
            self._notify("scanState")
        self._enter(STEP_OFF)
        await self._sleep(T_STEP_OFF)
        self._person_steps_off()
        self.progress = 0
        self._enter(PROCESSING)
        for progress in range(5, 101, 5):
            await self._sleep(T_PROCESSING / 20)
            self.progress = progress
            self._notify("scanState")
        self._enter(COMPLETE)

    # -- ATT handlers --------------------------------------------------------------------
    def write_init(self, _connection, value: bytes) -> None:
        value = bytes(value)
        if len(value) != 4:
            raise att.ATT_Error(ERR_LENGTH)
        opcode, height, units = struct.unpack("<BHB", value)
        if opcode != 0x01 or units not in (0, 1):
            raise att.ATT_Error(ERR_VALUE_NOT_ALLOWED)
        self.initialized = True
        self.height_mm, self.units = height, units

    def write_token(self, _connection, value: bytes) -> None:
        value = bytes(value)
        if len(value) != 16:
            raise att.ATT_Error(ERR_VALUE_NOT_ALLOWED if "wrong-length-code" in self.deviations else ERR_LENGTH)
        if not self.initialized:
            raise att.ATT_Error(ERR_NOT_ALIGNED if "wrong-error-code" in self.deviations else ERR_NO_INIT)
        self.token = value
        self._restart_sequence(self._warm_up())

    def _restart_sequence(self, coroutine) -> None:
        self._abort_scan()
        self.scan_task = self._spawn(coroutine)

    def write_control(self, _connection, value: bytes) -> None:
        value = bytes(value)
        if len(value) != 1:
            raise att.ATT_Error(ERR_LENGTH)
        opcode = value[0]
        if opcode == 0x01:
            if not self.aligned and "confirms-unaligned" not in self.deviations:
                raise att.ATT_Error(ERR_NOT_ALIGNED)
            self.alignment_confirmed = True
        elif opcode == 0x02:
            if self.state_ != READY:
                raise att.ATT_Error(ERR_NOT_READY)
            battery = self.faults.get("battery", {}).get("battery", self.battery)
            if battery < 10:
                self._enter(ERROR, 6)
                return
            self._restart_sequence(self._scan())
        elif opcode in (0x03, 0x04):
            self._abort_scan()
            self._enter(IDLE)
        else:
            raise att.ATT_Error(ERR_VALUE_NOT_ALLOWED)

    # -- control commands ------------------------------------------------------------------
    def cmd_fault(self, request: dict) -> dict:
        fault = request.get("fault")
        if "battery" in request and fault in (None, "battery"):
            self.faults["battery"] = {"battery": int(request["battery"])}
            self._notify("deviceInfo")
        elif fault == "clear":
            self.faults.clear()
        elif fault in STATE_FAULTS:
            entry = {"state": request.get("state", "idle"),
                     "stateIndex": state_index(request.get("state", "idle")),
                     "after_ms": int(request.get("after_ms", 0))}
            if fault == "stall":
                entry["ms"] = int(request.get("ms", 500))
            if fault == "malformed":
                entry["kind"] = str(request.get("kind", "short_value"))
            if fault == "disconnect":
                entry["reason"] = int(str(request.get("reason", 8)), 0)
            if fault == "error":
                entry["code"] = int(str(request.get("code", 0xFF)), 0)
            self.faults[fault] = entry
            if self.state_ == entry["stateIndex"] and self.connection is not None:
                self._check_state_faults(self.state_)  # already there: fire now
        elif fault == "step_off_early":
            self.faults[fault] = {"progress": int(request.get("progress", 50))}
        elif fault == "scale_never_present":
            self.faults[fault] = {}
        elif fault == "delay_writes":
            self.faults[fault] = {"ms": int(request.get("ms", 200)), "count": int(request.get("count", 1))}
        else:
            raise ValueError("fault must be disconnect, error, silence, stall, malformed, step_off_early, "
                             "scale_never_present, delay_writes, battery or clear")
        return {"faults": self._faults_json()}

    def _faults_json(self) -> dict:
        return {k: {kk: vv for kk, vv in v.items() if kk != "stateIndex"} for k, v in self.faults.items()}

    def cmd_state(self, _request: dict) -> dict:
        return {"mirror": self.state()["mirror"]}

    def state(self) -> dict:
        return {"mirror": {
            "state": STATES[self.state_], "stateCode": self.state_,
            "progress": self.progress if self.state_ in (SCANNING, PROCESSING) else 0,
            "error": self.error if self.state_ == ERROR else 0,
            "scale": {"flags": self.scale_flags, "present": bool(self.scale_flags & SCALE_PRESENT),
                      "occupied": bool(self.scale_flags & SCALE_OCCUPIED),
                      "stable": bool(self.scale_flags & SCALE_STABLE),
                      "level": bool(self.scale_flags & SCALE_LEVEL),
                      "kg": round(self.weight * 0.005, 3)},
            "alignment": {"angle": self.angle, "distance": self.distance, "aligned": self.aligned,
                          "confirmed": self.alignment_confirmed},
            "initialized": self.initialized, "heightMm": self.height_mm, "units": self.units,
            "token": self.token.hex() if self.token else None,
            "silent": self.silent, "speed": self.speed,
            "faults": self._faults_json(), "fired": list(self.fired), "faultsApplied": self.applied_total,
        }}


# Deliberate departures from the profile (--deviation), for showing that `hwprobe check`
# catches each: the same names as the in-process bench's (sim:?deviation=…). Not here:
# swapped-scan-response (bumble delivers no scan responses, so this mirror advertises extended),
# slow-processing and quiet-scale (at --speed their checks would wait minutes of real time, or
# see too short an occupied spell to judge a rate).
DEVIATIONS = ("no-service-uuid", "wrong-property", "out-of-range", "wrong-error-code", "advertises-while-connected",
              "notifies-unsubscribed", "honours-write-command", "wrong-length-code", "confirms-unaligned", "skips-step-off", "short-result",
              "progress-outside-scan", "stale-after-disconnect")


def mirror(speed: float = 10.0, deviations: tuple[str, ...] = ()) -> _p.Profile:
    unknown = set(deviations) - set(DEVIATIONS)
    if unknown:
        raise SystemExit(f"mirror: unknown --deviation {', '.join(sorted(unknown))} (one of {', '.join(DEVIATIONS)})")
    behavior = MirrorBehavior(speed)
    behavior.deviations = set(deviations)
    behavior._reset_all()
    P = Characteristic.Properties

    def uuid(name: str) -> str:
        return MIRROR_BASE.format(IDS[name])

    def reader(name):
        return lambda _connection: behavior.value(name)

    chars = {
        # wrong-property: declared write-only, though it still reads (the permission is kept).
        "deviceInfo": Characteristic(uuid("deviceInfo"), P.WRITE if "wrong-property" in deviations else P.READ, _p.READABLE,
                                     CharacteristicValue(read=reader("deviceInfo"))),
        "init": Characteristic(uuid("init"), P.WRITE, _p.WRITEABLE,
                               CharacteristicValue(read=_p._deny_read, write=behavior.delayed(behavior.write_init))),
        "scanToken": Characteristic(uuid("scanToken"), P.WRITE, _p.WRITEABLE,
                                    CharacteristicValue(read=_p._deny_read, write=behavior.delayed(behavior.write_token))),
        "scanState": Characteristic(uuid("scanState"), P.READ | P.NOTIFY, _p.READABLE,
                                    CharacteristicValue(read=reader("scanState"))),
        "scale": Characteristic(uuid("scale"), P.READ | P.NOTIFY, _p.READABLE,
                                CharacteristicValue(read=reader("scale"))),
        "alignment": Characteristic(uuid("alignment"), P.READ | P.NOTIFY, _p.READABLE,
                                    CharacteristicValue(read=reader("alignment"))),
        "control": Characteristic(uuid("control"), P.WRITE, _p.WRITEABLE,
                                  CharacteristicValue(read=_p._deny_read, write=behavior.delayed(behavior.write_control))),
        "result": Characteristic(uuid("result"), P.READ, _p.READABLE,
                                 CharacteristicValue(read=reader("result"))),
    }
    behavior.chars = chars
    # honours-write-command: Write Commands reach the handlers like requests.
    behavior.write_request_only = ([] if "honours-write-command" in deviations
                                   else [chars["init"], chars["scanToken"], chars["control"]])
    service = Service(MIRROR_SERVICE, list(chars.values()))

    flags = (AdvertisingData.FLAGS, bytes([0x06]))
    uuids128 = (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
                UUID(MIRROR_SERVICE).to_bytes(force_128=True))
    manufacturer = (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, MIRROR_MANUFACTURER)
    name = (AdvertisingData.COMPLETE_LOCAL_NAME, MIRROR_NAME.encode())
    extended = (_p._ad(flags, manufacturer, name) if "no-service-uuid" in deviations
                else _p._ad(flags, uuids128, manufacturer, name))  # 45 bytes
    return _p.Profile(
        name="mirror", device_name=MIRROR_NAME, services=[service],
        legacy_advertising_data=_p._ad(flags, uuids128),  # unused: the mirror always uses extended
        extended_advertising_data=extended,
        roles=dict(chars), writes=[], behavior=behavior, force_extended=True,
    )
