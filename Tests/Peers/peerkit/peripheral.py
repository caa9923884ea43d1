"""Controller B and the bumble Device on it: the peripheral the host under test talks to."""
from __future__ import annotations

import asyncio
import logging
import struct
import time

from bumble import att, hci
from bumble.controller import Controller
from bumble.device import (
    AdvertisingEventProperties,
    AdvertisingParameters,
    Device,
    DeviceConfiguration,
)
from bumble.host import Host

from .gattjson import address_text, database, uuid_text
from .pairing import PairingAgent, PairingOptions
from .pairing_control import pairing_commands
from .pairing_events import EventLog
from .privacy import make_rpa
from .profiles import Profile

log = logging.getLogger("peer.peripheral")

ATT_CID = 0x0004
ATT_HANDLE_VALUE_NOTIFICATION = 0x1B


class Peripheral:
    def __init__(self, link, profile: Profile, address: str, random: bool,
                 extended: bool, interval_ms: float, pairing: PairingOptions | None = None,
                 events: EventLog | None = None):
        self.link = link
        self.profile = profile
        self.random = random
        extended = extended or profile.force_extended
        self.extended = extended
        self.interval_ms = interval_ms
        self.advertising_data = (profile.extended_advertising_data if extended
                                 else profile.legacy_advertising_data)
        kind = hci.Address.RANDOM_DEVICE_ADDRESS if random else hci.Address.PUBLIC_DEVICE_ADDRESS
        self.address = hci.Address(address, kind)
        self.controller = Controller(
            "B", link=link,
            public_address=None if random else self.address,
        )
        if not extended:
            # Legacy advertising then really goes out as legacy PDUs (bumble's Device uses
            # extended commands with "legacy" properties otherwise, which its controller
            # sends as extended PDUs).
            self.controller.le_features = self.controller.le_features & ~(
                hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
            )
        config = DeviceConfiguration()
        config.name = profile.device_name
        config.address = self.address if random else hci.Address("C0:00:00:00:00:01")
        config.advertising_data = self.advertising_data
        config.scan_response_data = b""
        self.device = Device(config=config,
                             host=Host(controller_source=self.controller, controller_sink=self.controller))
        self.device.add_services(profile.services)
        # What the peer did, for the control channel's `events` (pairing reports there).
        self.events = events or EventLog()
        # bumble's Security Manager with its stock defects fixed (peerkit/pairing.py); None
        # leaves the stock one in place.
        self.pairing = PairingAgent(self.device, pairing, self.events) if pairing is not None else None
        # Control commands beyond the profile's own (ControlServer looks here too).
        self.commands = pairing_commands(self.pairing, lambda: self.connection) if self.pairing is not None else {}
        if self.pairing is not None:
            self.commands["private_address"] = self._private_address_command
        # Advertising from a resolvable private address made with our IRK (None: from `address`).
        self.private_address: hci.Address | None = None

        self.connection = None
        self.connections_seen = 0
        self.blackhole = False
        self.delay_s = 0.0
        self.advertising_set = None
        self._advertise_task = None
        self.closing = False
        self._install_att_filter()
        self.device.on("connection", self._on_connection)
        self.behavior = profile.behavior
        if self.behavior is not None:
            self.behavior.attach(self)

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        await self.device.power_on()
        await self.advertise()
        if self.behavior is not None:
            await self.behavior.start()

    @property
    def own_address_type(self) -> hci.OwnAddressType:
        return hci.OwnAddressType.RANDOM if self.random or self.private_address is not None else hci.OwnAddressType.PUBLIC

    async def _private_address_command(self, request: dict) -> dict:
        """`private_address`: advertise from a new resolvable private address made with our IRK
        (what a phone does every ~15 minutes), so a central must resolve it to find us. Our own
        `ah` (peerkit.privacy), not bumble's Device.update_rpa: that one sets the old address on
        the controller and only then remembers the new one (bumble 0.0.236)."""
        if self.connection is not None:
            raise RuntimeError("connected: a private address changes between connections")
        if self.extended:
            raise RuntimeError("private_address supports legacy advertising only")
        address = make_rpa(bytes(reversed(self.device.irk)))
        self.private_address = hci.Address(address.hex(":").upper(), hci.Address.RANDOM_DEVICE_ADDRESS)
        await self.device.stop_advertising()
        await self.device.send_command(hci.HCI_LE_Set_Random_Address_Command(random_address=self.private_address))
        self.device.random_address = self.private_address
        await self.advertise()
        self.events.emit("private_address", address=address.hex(":").upper())
        return {"address": address.hex(":").upper()}

    def address_text(self) -> str:
        return address_text(self.address) + ("/random" if self.random else "")

    async def advertise(self) -> None:
        if self.connection is not None:
            return
        if self.extended:
            if self.advertising_set is None:
                self.advertising_set = await self.device.create_advertising_set(
                    advertising_parameters=AdvertisingParameters(
                        advertising_event_properties=AdvertisingEventProperties(
                            is_connectable=True, is_scannable=False, is_legacy=False),
                        primary_advertising_interval_min=self.interval_ms,
                        primary_advertising_interval_max=self.interval_ms,
                        own_address_type=self.own_address_type,
                    ),
                    random_address=self.address if self.random else None,
                    advertising_data=self.advertising_data,
                    auto_start=True,
                    auto_restart=False,
                )
            else:
                await self.advertising_set.set_advertising_data(self.advertising_data)
                if not self.advertising_set.enabled:
                    await self.advertising_set.start()
        else:
            await self.device.start_advertising(
                own_address_type=self.own_address_type,
                advertising_data=self.advertising_data,
                scan_response_data=b"",
                advertising_interval_min=self.interval_ms,
                advertising_interval_max=self.interval_ms,
            )

    def _on_connection(self, connection) -> None:
        log.info("connected: %s handle 0x%04X", connection.peer_address, connection.handle)
        self.connection = connection
        self.connections_seen += 1
        connection.on("disconnection", lambda reason: self._on_disconnection(connection, reason))
        if self.behavior is not None:
            self.behavior.on_connection(connection)

    def _on_disconnection(self, connection, reason) -> None:
        log.info("disconnected: reason 0x%02X", reason)
        if self.connection is connection:
            self.connection = None
        # Faults are per connection: the next test starts clean.
        self.blackhole = False
        self.delay_s = 0.0
        if self.behavior is not None:
            self.behavior.on_disconnection(connection, reason)
        if not self.closing:
            self._advertise_task = asyncio.get_running_loop().create_task(self._readvertise())

    async def aclose(self) -> None:
        self.closing = True
        if self.behavior is not None:
            self.behavior.close()
        task = self._advertise_task
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def _readvertise(self) -> None:
        try:
            await self.advertise()
        except Exception:
            log.exception("restarting advertising failed")

    # -- faults ----------------------------------------------------------------------------
    def _install_att_filter(self) -> None:
        server = self.device.gatt_server
        original = server.on_gatt_pdu

        def filtered(bearer, pdu):
            if (pdu.op_code == att.Opcode.ATT_WRITE_COMMAND and self.behavior is not None
                    and any(c.handle == pdu.attribute_handle for c in self.behavior.write_request_only)):
                log.info("write command to a write-request-only characteristic: ignored")
                return
            if self.blackhole:
                log.info("blackhole: dropped %s", pdu.name)
                return
            if self.delay_s > 0:
                asyncio.get_running_loop().call_later(self.delay_s, original, bearer, pdu)
                return
            original(bearer, pdu)

        server.on_gatt_pdu = filtered

    def _require_connection(self):
        if self.connection is None:
            raise RuntimeError("not connected")
        return self.connection

    # -- control operations ------------------------------------------------------------
    def database(self) -> dict:
        mtu = self.connection.att_mtu if self.connection is not None else att.ATT_DEFAULT_MTU
        return database(self.device.gatt_server, address_text(self.address), mtu)

    def subscriptions(self) -> dict:
        if self.connection is None:
            return {}
        cccds = self.device.gatt_server.subscribers.get(self.connection, {})
        result = {}
        for handle, value in cccds.items():
            attribute = self.device.gatt_server.get_attribute(handle)
            bits = int.from_bytes(value, "little") if value else 0
            kinds = [k for bit, k in ((1, "notify"), (2, "indicate")) if bits & bit]
            if kinds:
                result[uuid_text(attribute.type)] = kinds
        return result

    def state(self) -> dict:
        c = self.connection
        return {
            "connected": c is not None,
            "peer": address_text(c.peer_address) if c else None,
            "peerType": ("public" if c.peer_address.is_public else "random") if c else None,
            "handle": c.handle if c else None,
            "mtu": c.att_mtu if c else None,
            "subscriptions": self.subscriptions(),
            "blackhole": self.blackhole,
            "delayMs": round(self.delay_s * 1000),
            "connections": self.connections_seen,
            "advertisingData": self.advertising_data.hex(),
            "profile": self.profile.name,
            **({"security": self.pairing.link_security(c).describe(), "pairing": self.pairing.state()}
               if self.pairing is not None else {}),
            **(self.behavior.state() if self.behavior is not None else {}),
        }

    def _subscribed(self, characteristic, bit: int) -> bool:
        cccd = self.device.gatt_server.subscribers.get(self.connection, {}).get(characteristic.handle)
        return bool(cccd) and bool(cccd[0] & bit)

    async def notify(self, count: int, size: int, force: bool = False) -> dict:
        connection = self._require_connection()
        characteristic = self.profile.roles["notify"]
        if not force and not self._subscribed(characteristic, 0x01):
            raise RuntimeError("central has not enabled notifications")
        size = max(0, min(size, connection.att_mtu - 3))
        header = bytes([ATT_HANDLE_VALUE_NOTIFICATION]) + struct.pack("<H", characteristic.handle)
        filler = bytes((i & 0xFF) for i in range(size))
        start = time.perf_counter()
        for sequence in range(count):
            payload = (struct.pack("<I", sequence) + filler[4:])[:size]
            self.device.send_l2cap_pdu(connection.handle, ATT_CID, header + payload)
        await connection.drain()
        seconds = time.perf_counter() - start
        return {"count": count, "size": size, "seconds": seconds,
                "perSecond": count / seconds if seconds > 0 else None}

    async def indicate(self, count: int, size: int = 4) -> dict:
        connection = self._require_connection()
        characteristic = self.profile.roles["indicate"]
        if not self._subscribed(characteristic, 0x02):
            raise RuntimeError("central has not enabled indications")
        start = time.perf_counter()
        confirmed = 0
        for sequence in range(count):
            value = struct.pack("<I", sequence)[:size].ljust(size, b"\x00")
            await self.device.gatt_server.indicate_subscriber(connection, characteristic, value)
            confirmed += 1
        seconds = time.perf_counter() - start
        return {"count": count, "confirmed": confirmed, "seconds": seconds,
                "perSecond": count / seconds if seconds > 0 else None}

    async def disconnect(self, reason: int) -> dict:
        connection = self._require_connection()
        await connection.disconnect(reason=reason)
        return {"reason": reason}

    def raw_l2cap(self, cid: int, data: bytes) -> dict:
        connection = self._require_connection()
        self.device.send_l2cap_pdu(connection.handle, cid, data)
        return {"sent": len(data)}

    def raw_acl(self, data: bytes) -> dict:
        """Bytes as one ACL payload (an L2CAP frame you build yourself, maybe malformed)."""
        connection = self._require_connection()
        self.device.host.send_hci_packet(
            hci.HCI_AclDataPacket(connection.handle, 0b10, 0, len(data), data))
        return {"sent": len(data)}

    async def set_advertising_data(self, data: bytes) -> dict:
        self.advertising_data = data
        if self.connection is None:
            await self.advertise()
        return {"advertisingData": data.hex(), "applied": self.connection is None}
