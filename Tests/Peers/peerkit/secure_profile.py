"""Profile `secure`: the generic peripheral plus characteristics that need a secure link.

Service `A5C30010-6B1E-4F2A-9D3C-2B7E5F10C4A9` (the generic profile's UUID base):

* `…0011` read/write: needs an encrypted link with an *authenticated Secure Connections* key
  of 16 octets (LE security mode 1 level 4); value `authenticated-sc`.
* `…0012` read/write: needs an encrypted link, any key (level 2); value `encrypted`.

The answer when the link falls short follows the responses Core Vol 3 Part C §10.3 gives a
server: on an unencrypted link, Insufficient Encryption (0x0F) when the client holds a bond
that would do (it only needs to encrypt), otherwise Insufficient Authentication (0x05: pairing
is needed); on an encrypted link whose key is unauthenticated or legacy, Insufficient
Authentication (0x05); a key shorter than 16 octets for `…0011`, Insufficient Encryption Key
Size (0x0C). The link's security is what the pairing agent saw happen, not bumble's flags.
"""
from __future__ import annotations

from bumble import att
from bumble.gatt import Characteristic, CharacteristicValue, Service

from .profiles import GENERIC_BASE, Profile, Behavior, generic, _ad

P = Characteristic.Properties
SECURE_SERVICE = GENERIC_BASE.format(0x0010)
AUTHENTICATED_SC_UUID = GENERIC_BASE.format(0x0011)
ENCRYPTED_UUID = GENERIC_BASE.format(0x0012)
AUTHENTICATED_SC_VALUE = b"authenticated-sc"
ENCRYPTED_VALUE = b"encrypted"
SECURE_NAME = "hwprobe-secure"

INSUFFICIENT_AUTHENTICATION = 0x05
INSUFFICIENT_ENCRYPTION_KEY_SIZE = 0x0C
INSUFFICIENT_ENCRYPTION = 0x0F


def att_error_for(agent, connection, level: str) -> int | None:
    """The ATT error for a request needing `level` ("encrypted" or "authenticated-sc") on this
    link, or None when the link has it."""
    security = agent.link_security(connection)
    if not security.encrypted:
        bond = agent.bond_for(connection)
        if bond is None:
            return INSUFFICIENT_AUTHENTICATION
        if level == "authenticated-sc" and not (bond.authenticated and bond.sc):
            return INSUFFICIENT_AUTHENTICATION
        return INSUFFICIENT_ENCRYPTION
    if level == "authenticated-sc":
        if not (security.authenticated and security.sc):
            return INSUFFICIENT_AUTHENTICATION
        if security.key_size < 16:
            return INSUFFICIENT_ENCRYPTION_KEY_SIZE
    return None


class SecureBehavior(Behavior):
    def __init__(self, writes: list[dict]) -> None:
        super().__init__()
        self.writes = writes
        self.refusals: list[dict] = []

    def guard(self, connection, level: str, uuid: str, operation: str) -> None:
        agent = getattr(self.peripheral, "pairing", None) if self.peripheral is not None else None
        code = att_error_for(agent, connection, level) if agent is not None else INSUFFICIENT_AUTHENTICATION
        if code is not None:
            self.refusals.append({"uuid": uuid, "operation": operation, "error": code})
            raise att.ATT_Error(code)

    def characteristic(self, uuid: str, level: str, value: bytes) -> Characteristic:
        stored = {"value": value}

        def read(connection):
            self.guard(connection, level, uuid, "read")
            return stored["value"]

        def write(connection, new_value: bytes) -> None:
            self.guard(connection, level, uuid, "write")
            stored["value"] = bytes(new_value)
            self.writes.append({"characteristic": level, "uuid": uuid, "hex": bytes(new_value).hex()})

        return Characteristic(uuid, P.READ | P.WRITE, att.Attribute.READABLE | att.Attribute.WRITEABLE,
                              CharacteristicValue(read=read, write=write))

    def state(self) -> dict:
        return {"refusals": list(self.refusals)}


def secure() -> Profile:
    profile = generic()
    behavior = SecureBehavior(profile.writes)
    authenticated_sc = behavior.characteristic(AUTHENTICATED_SC_UUID, "authenticated-sc", AUTHENTICATED_SC_VALUE)
    encrypted = behavior.characteristic(ENCRYPTED_UUID, "encrypted", ENCRYPTED_VALUE)
    profile.services.insert(1, Service(SECURE_SERVICE, [authenticated_sc, encrypted]))
    profile.roles.update({"authenticatedSC": authenticated_sc, "encrypted": encrypted})
    profile.name = "secure"
    profile.device_name = SECURE_NAME
    # Same advertising as generic, with this profile's name (31 bytes: it just fits).
    profile.legacy_advertising_data = _rename(profile.legacy_advertising_data)
    profile.extended_advertising_data = _rename(profile.extended_advertising_data)
    profile.behavior = behavior
    return profile


def _rename(data: bytes) -> bytes:
    structures, i = [], 0
    while i < len(data):
        length = data[i]
        kind, value = data[i + 1], data[i + 2:i + 1 + length]
        structures.append((kind, SECURE_NAME.encode() if kind == 0x09 else value))
        i += 1 + length
    result = _ad(*structures)
    assert len(result) <= 31 or len(data) > 31, len(result)
    return result
