"""Peripheral profiles: what controller B's device advertises and serves.

A profile is a function returning a `Profile`: its GATT services, its advertising data
(legacy: everything in 31 bytes, bumble never delivers scan responses; extended: may be
longer), and the characteristics the control channel acts on by role name.
"""
from __future__ import annotations

import dataclasses
import struct

from bumble import att
from bumble.core import AdvertisingData, UUID
from bumble.gatt import (
    GATT_CHARACTERISTIC_USER_DESCRIPTION_DESCRIPTOR,
    Characteristic,
    CharacteristicValue,
    Descriptor,
    Service,
)

P = Characteristic.Properties
READABLE = att.Attribute.READABLE
WRITEABLE = att.Attribute.WRITEABLE


@dataclasses.dataclass
class Profile:
    name: str
    device_name: str
    services: list[Service]
    legacy_advertising_data: bytes
    extended_advertising_data: bytes
    roles: dict[str, Characteristic]  # 'notify', 'indicate', ... -> characteristic
    writes: list[dict]  # appended to by write handlers
    # Optional runtime behaviour (a simulated device): see Behavior below.
    behavior: "Behavior | None" = None
    # True: always advertise with extended advertising (the data needs more than 31 bytes).
    force_extended: bool = False


class Behavior:
    """What a profile with a simulated device plugs into the peripheral.

    `attach` runs once the bumble Device exists (inside the event loop); `on_connection` /
    `on_disconnection` follow the link; `commands` adds control-channel commands
    (name -> callable(request) returning a dict or an awaitable of one); ATT Write Commands
    to the handles of `write_request_only` are dropped (a characteristic that only allows
    Write Requests ignores them); `state` is merged into the `state` command's answer.
    """

    commands: dict = {}

    def __init__(self):
        self.peripheral = None
        self.write_request_only: list[Characteristic] = []

    def attach(self, peripheral) -> None:
        self.peripheral = peripheral

    async def start(self) -> None:
        pass

    def on_connection(self, connection) -> None:
        pass

    def on_disconnection(self, connection, reason: int) -> None:
        pass

    def close(self) -> None:
        pass

    def state(self) -> dict:
        return {}


def _deny_read(_connection):
    # bumble's server does not enforce the READABLE permission bit on its own.
    raise att.ATT_Error(att.ATT_READ_NOT_PERMITTED_ERROR)


def _ad(*structures: tuple[int, bytes]) -> bytes:
    return b"".join(bytes([len(data) + 1, kind]) + data for kind, data in structures)


# ---------------------------------------------------------------------------------------
# generic: a little of everything a GATT client meets
GENERIC_BASE = "A5C3{:04X}-6B1E-4F2A-9D3C-2B7E5F10C4A9"
GENERIC_SERVICE = GENERIC_BASE.format(0x0001)
GENERIC_NAME = "hwprobe-peer"
GENERIC_SHORT_VALUE = b"hwprobe"
GENERIC_LONG_VALUE = bytes((i * 7 + 3) & 0xFF for i in range(300))
GENERIC_MANUFACTURER = struct.pack("<H", 0xFFFF) + b"hwp\x01"
GENERIC_USER_DESCRIPTION = "hwprobe test characteristic"
BATTERY_LEVEL = 87


def generic() -> Profile:
    writes: list[dict] = []

    def recorder(role: str):
        def record(connection, value: bytes) -> None:
            writes.append({"characteristic": role, "uuid": GENERIC_BASE.format(ROLE_IDS[role]),
                           "hex": bytes(value).hex()})
            stored[role] = bytes(value)
        return record

    stored: dict[str, bytes] = {}
    ROLE_IDS = {"read": 0x0002, "readLong": 0x0003, "write": 0x0004, "writeWithoutResponse": 0x0005,
                "notify": 0x0006, "indicate": 0x0007, "described": 0x0008}

    def uuid(role: str) -> str:
        return GENERIC_BASE.format(ROLE_IDS[role])

    read_char = Characteristic(uuid("read"), P.READ, READABLE, GENERIC_SHORT_VALUE)
    read_long = Characteristic(uuid("readLong"), P.READ, READABLE, GENERIC_LONG_VALUE)
    write_char = Characteristic(uuid("write"), P.WRITE, WRITEABLE,
                                CharacteristicValue(read=_deny_read, write=recorder("write")))
    write_cmd = Characteristic(uuid("writeWithoutResponse"), P.WRITE_WITHOUT_RESPONSE, WRITEABLE,
                               CharacteristicValue(read=_deny_read, write=recorder("writeWithoutResponse")))
    notify_char = Characteristic(uuid("notify"), P.READ | P.NOTIFY, READABLE, b"\x00\x00\x00\x00")
    indicate_char = Characteristic(uuid("indicate"), P.INDICATE, READABLE,
                                   CharacteristicValue(read=_deny_read))
    described = Characteristic(
        uuid("described"), P.READ, READABLE, b"\x2a",
        descriptors=[Descriptor(GATT_CHARACTERISTIC_USER_DESCRIPTION_DESCRIPTOR, READABLE,
                                GENERIC_USER_DESCRIPTION.encode())],
    )
    custom = Service(GENERIC_SERVICE, [read_char, read_long, write_char, write_cmd,
                                       notify_char, indicate_char, described])

    battery_level = Characteristic("2A19", P.READ | P.NOTIFY, READABLE, bytes([BATTERY_LEVEL]))
    battery = Service("180F", [battery_level])

    flags = (AdvertisingData.FLAGS, bytes([0x06]))  # LE General Discoverable, no BR/EDR
    name = (AdvertisingData.COMPLETE_LOCAL_NAME, GENERIC_NAME.encode())
    uuids16 = (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x180F))
    manufacturer = (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, GENERIC_MANUFACTURER)
    uuids128 = (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
                UUID(GENERIC_SERVICE).to_bytes(force_128=True))
    legacy = _ad(flags, uuids16, manufacturer, name)
    assert len(legacy) <= 31, len(legacy)
    extended = _ad(flags, uuids16, uuids128, manufacturer, name)

    return Profile(
        name="generic",
        device_name=GENERIC_NAME,
        services=[custom, battery],
        legacy_advertising_data=legacy,
        extended_advertising_data=extended,
        roles={"read": read_char, "readLong": read_long, "write": write_char,
               "writeWithoutResponse": write_cmd, "notify": notify_char,
               "indicate": indicate_char, "described": described, "battery": battery_level},
        writes=writes,
    )


PROFILES = {"generic": generic}

from .mirror import mirror  # noqa: E402  (these modules import Profile from here)
from .scales import bcs, miscale, miscale2, scale  # noqa: E402

from .vendor_scales import beurer, icomon, onebyone, qn, qn_broadcast, yunmai  # noqa: E402
from .secure_profile import secure  # noqa: E402

PROFILES.update({"mirror": mirror, "scale": scale, "bcs": bcs, "miscale": miscale, "miscale2": miscale2,
                 "qn": qn, "qn-broadcast": qn_broadcast, "icomon": icomon, "onebyone": onebyone, "yunmai": yunmai, "beurer": beurer})
PROFILES["secure"] = secure
