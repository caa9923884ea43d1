"""A central that pairs: bumble's host with the fixed Security Manager of `pairing.py`.

For tests of a peripheral's Security Manager (hwprobe's `serve --pairing`, or this repository's
own pairing peripheral): connect to an address, pair with the same knobs as the peripheral peer
(`PairingOptions`), encrypt a reconnection with the bond's key, read or write a protected
characteristic (securing the link first when the server answers 0x05/0x0F, as a client that
pairs on demand does), and report every step through the agent's `EventLog`.

    central = PairingCentral(device, PairingOptions(io="keyboard", passkey=123456))
    await central.connect("B0:B0:B0:00:00:01")
    result = await central.pair()            # {"paired": true, "method": "passkey-entry", …}
    value = await central.read(UUID)         # {"value": "…"} or {"attError": 5}

A central peer process can import this module; `device` may sit on any controller (a
`LocalLink` controller in the same process, or an H4 transport).
"""
from __future__ import annotations

import asyncio
import time

from bumble import att, hci
from bumble.core import ProtocolError
from bumble.device import Peer

from .bonds import address_label
from .gattjson import uuid_text
from .pairing import PairingAgent, PairingOptions
from .pairing_events import EventLog
from .smp_session import SmpTimeout, reason_name

INSUFFICIENT_AUTHENTICATION = 0x05
INSUFFICIENT_ENCRYPTION = 0x0F


def parse_address(text: str) -> hci.Address:
    """`AA:BB:CC:DD:EE:FF` (public) or `AA:BB:CC:DD:EE:FF/random`."""
    base, _, kind = text.partition("/")
    return hci.Address(base, hci.Address.RANDOM_DEVICE_ADDRESS if kind == "random"
                       else hci.Address.PUBLIC_DEVICE_ADDRESS)


class PairingCentral:
    def __init__(self, device, options: PairingOptions | None = None, events: EventLog | None = None,
                 agent: PairingAgent | None = None) -> None:
        self.device = device
        self.agent = agent or PairingAgent(device, options or PairingOptions(), events)
        self.events = self.agent.events
        self.connection = None
        self.peer: Peer | None = None
        self._discovered = False

    @property
    def options(self) -> PairingOptions:
        return self.agent.options

    def _require_connection(self):
        if self.connection is None:
            raise RuntimeError("not connected: connect first")
        return self.connection

    async def connect(self, address: str | hci.Address, timeout: float = 5.0,
                      own_address_type: hci.OwnAddressType = hci.OwnAddressType.PUBLIC) -> dict:
        target = parse_address(address) if isinstance(address, str) else address
        started = time.monotonic()
        self.connection = await self.device.connect(target, own_address_type=own_address_type, timeout=timeout)
        self.peer = Peer(self.connection)
        self._discovered = False
        return {"handle": self.connection.handle, "seconds": round(time.monotonic() - started, 4)}

    async def disconnect(self, reason: int = hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR) -> dict:
        connection = self._require_connection()
        done = asyncio.get_running_loop().create_future()
        connection.once(connection.EVENT_DISCONNECTION, lambda r: done.done() or done.set_result(r))
        await connection.disconnect(reason)
        await asyncio.wait_for(done, 5)
        self.connection = None
        self.peer = None
        return {"reason": reason}

    async def pair(self, timeout: float | None = None) -> dict:
        """Pairs (Pairing Request from us). Never raises for a pairing that fails: the answer
        says why (`reason` is the Pairing Failed code, None for the SMP timeout)."""
        connection = self._require_connection()
        since = len(self.events.events)
        started = time.monotonic()
        limit = timeout if timeout is not None else self.options.smp_timeout + 5
        try:
            await asyncio.wait_for(self.device.pair(connection), limit)
        except SmpTimeout as error:
            return {"paired": False, "reason": None, "reasonName": "SMP timeout", "detail": str(error),
                    "seconds": round(time.monotonic() - started, 4)}
        except ProtocolError as error:
            code = int(error.error_code)
            return {"paired": False, "reason": code, "reasonName": reason_name(code),
                    "seconds": round(time.monotonic() - started, 4)}
        except asyncio.CancelledError:
            # bumble cancels the wait when the link goes down; a cancellation of this task is real
            current = asyncio.current_task()
            if (current is not None and current.cancelling()) or (
                    self.connection is not None and self.connection.handle in self.agent.security):
                raise
            return {"paired": False, "reason": None, "reasonName": "disconnected",
                    "seconds": round(time.monotonic() - started, 4)}
        paired = self.events.named("paired", since)
        result = {"paired": True, "seconds": round(time.monotonic() - started, 4)}
        if paired:
            result.update({k: v for k, v in paired[-1].items() if k not in ("event", "t", "seconds")})
        return result

    async def encrypt(self, timeout: float = 5.0) -> dict:
        """Encrypts with the bond's key, no pairing (a reconnection)."""
        connection = self._require_connection()
        started = time.monotonic()
        try:
            security = await self.agent.encrypt_with_bond(connection, timeout)
        except (ConnectionError, LookupError) as error:
            return {"encrypted": False, "detail": str(error), "seconds": round(time.monotonic() - started, 4)}
        return {"encrypted": security.encrypted, **security.describe(),
                "seconds": round(time.monotonic() - started, 4)}

    async def secure(self) -> dict:
        """Encrypts with the bond when there is one, pairs otherwise."""
        connection = self._require_connection()
        if self.agent.bond_for(connection) is not None:
            result = await self.encrypt()
            if result.get("encrypted"):
                return result
        return await self.pair()

    async def characteristic(self, uuid: str):
        if self.peer is None:
            raise RuntimeError("not connected: connect first")
        if not self._discovered:
            await self.peer.discover_all()
            self._discovered = True
        wanted = uuid.upper()
        for service in self.peer.services:
            for characteristic in service.characteristics:
                if uuid_text(characteristic.uuid) == wanted:
                    return characteristic
        raise LookupError(f"no characteristic {uuid} on {address_label(self.connection.peer_address)}")

    async def read(self, uuid: str, auto_secure: bool = True) -> dict:
        """Reads a characteristic; on Insufficient Authentication/Encryption with `auto_secure`,
        secures the link (bond or pairing) and reads once more, as a client that pairs on demand
        does. The answer lists each ATT error met (`attErrors`)."""
        return await self._with_security(uuid, auto_secure, lambda c: c.read_value(), "value")

    async def write(self, uuid: str, value: bytes, auto_secure: bool = True) -> dict:
        return await self._with_security(uuid, auto_secure, lambda c: c.write_value(value, with_response=True),
                                         "written")

    async def _with_security(self, uuid: str, auto_secure: bool, operation, key: str) -> dict:
        errors: list[int] = []
        secured = None
        for attempt in range(2):
            try:
                # Discovery too: a server that serves nothing before encryption (`serve --pairing
                # required`) refuses it with 0x05/0x0F, and a client pairs and discovers again.
                characteristic = await self.characteristic(uuid)
                result = await operation(characteristic)
            except att.ATT_Error as error:
                errors.append(int(error.error_code))
                if (not auto_secure or attempt == 1
                        or error.error_code not in (INSUFFICIENT_AUTHENTICATION, INSUFFICIENT_ENCRYPTION)):
                    return {"attError": int(error.error_code), "attErrors": errors, "secured": secured}
                # 0x0F: a bond would do, encrypt with it (or pair without one); 0x05: pair.
                secured = await (self.secure() if error.error_code == INSUFFICIENT_ENCRYPTION else self.pair())
                if not (secured.get("paired") or secured.get("encrypted")):
                    return {"attError": int(error.error_code), "attErrors": errors, "secured": secured}
                continue
            answer = {"attErrors": errors, "secured": secured}
            answer[key] = result.hex() if isinstance(result, (bytes, bytearray)) else True
            return answer
        raise AssertionError("unreachable")
