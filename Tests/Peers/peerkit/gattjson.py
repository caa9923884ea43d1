"""The GATT database as JSON, in the shape of `hwprobe gatt --json` (docs/cli.md)."""
from __future__ import annotations

from bumble.core import UUID
from bumble.gatt import Characteristic, CharacteristicDeclaration, IncludedServiceDeclaration, Service

# Bit order of the characteristic properties byte (Core Vol 3 Part G 3.3.1.1).
PROPERTY_NAMES = [
    (0x01, "broadcast"),
    (0x02, "read"),
    (0x04, "writeWithoutResponse"),
    (0x08, "write"),
    (0x10, "notify"),
    (0x20, "indicate"),
    (0x40, "authenticatedSignedWrites"),
    (0x80, "extendedProperties"),
]


def uuid_text(uuid: UUID) -> str:
    """16-bit UUIDs as 4 upper-case hex digits, all others canonical upper-case."""
    raw = uuid.to_bytes()
    if len(raw) == 2:
        return f"{int.from_bytes(raw, 'little'):04X}"
    h = bytes(reversed(uuid.to_bytes(force_128=True))).hex().upper()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def property_names(properties: int) -> list[str]:
    return [name for bit, name in PROPERTY_NAMES if properties & bit]


def address_text(address) -> str:
    """bumble prints addresses MSB first already; drop any '/P' style suffix."""
    return address.to_string(with_type_qualifier=False).upper()


def database(server, address: str, mtu: int) -> dict:
    services: list[dict] = []
    current_service = None
    current_characteristic = None
    value_handle = None
    for attribute in server.attributes:
        if isinstance(attribute, Service):
            current_service = {
                "uuid": uuid_text(attribute.uuid),
                "start": attribute.handle,
                "end": attribute.end_group_handle,
                "characteristics": [],
            }
            services.append(current_service)
            current_characteristic = None
        elif isinstance(attribute, IncludedServiceDeclaration):
            continue
        elif isinstance(attribute, CharacteristicDeclaration):
            characteristic = attribute.characteristic
            value_handle = attribute.value_handle
            current_characteristic = {
                "uuid": uuid_text(characteristic.uuid),
                "handle": value_handle,
                "properties": property_names(int(characteristic.properties)),
                "descriptors": [],
            }
            current_service["characteristics"].append(current_characteristic)
        elif isinstance(attribute, Characteristic) or attribute.handle == value_handle:
            continue  # the characteristic value itself
        elif current_characteristic is not None:
            current_characteristic["descriptors"].append(
                {"uuid": uuid_text(attribute.type), "handle": attribute.handle}
            )
    return {"address": address, "mtu": mtu, "services": services}
