"""Pairing for a bumble Device acting as a test peer, in either role.

`PairingAgent(device, options)` takes over a bumble `Device`'s Security Manager: it installs the
fixed sessions of `smp_session.py`, keeps the bonds (`bonds.py`) for the peer's lifetime,
answers LE Long Term Key Requests with the right key, tracks each link's security from what
actually happened (not from bumble's `authenticated` flag, which stock sets on every encrypted
link), and reports every step as an event (`pairing_events.py`):

    connected, disconnected, security_request, pairing_started, method, passkey_displayed,
    passkey_requested, passkey_entered, numeric_comparison_requested, numeric_comparison,
    fault, ltk_request, encryption_changed, encryption_failed, keys, paired, bonded,
    pairing_failed

(fields in ../README.md, "Pairing"). Key values appear only when `reveal_keys` is on.

The peripheral (`ble_peer.py`) and a central (`pairing_central.py`) use it the same way; the
options are the knobs a test turns (IO capability, Secure Connections only / allowed / off,
bonding, MITM, a fixed passkey, the numeric comparison's answer, key sizes, the SMP timeout,
and one-shot faults).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets

from bumble import hci
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.smp import IoCapability, KeyDistribution

from .bonds import Bond, BondStore, DistributedKey, address_label
from .pairing_events import EventLog
from .smp_session import PeerManager, PeerSession, auth_req_fields, reason_name

log = logging.getLogger("peer.pairing")

IO_CAPABILITIES = {
    # hwprobe's --io words (hwprobe-cli.md, third edition) and the specification's names
    "display": IoCapability.DISPLAY_ONLY,
    "display-only": IoCapability.DISPLAY_ONLY,
    "display-yes-no": IoCapability.DISPLAY_YES_NO,
    "keyboard": IoCapability.KEYBOARD_ONLY,
    "keyboard-only": IoCapability.KEYBOARD_ONLY,
    "keyboard-display": IoCapability.KEYBOARD_DISPLAY,
    "none": IoCapability.NO_INPUT_NO_OUTPUT,
    "no-input-no-output": IoCapability.NO_INPUT_NO_OUTPUT,
}

FAULT_KINDS = ("silent", "drop_link", "off_curve_key", "wrong_confirm", "wrong_dhkey_check", "refuse")
FAULT_STAGES = ("pairing_request", "pairing_response", "public_key", "confirm", "random",
                "dhkey_check", "keys")
DEFAULT_STAGE = {"silent": "confirm", "drop_link": "confirm", "off_curve_key": "public_key",
                 "wrong_confirm": "confirm", "wrong_dhkey_check": "dhkey_check",
                 "refuse": "pairing_request"}


def _bool(value) -> bool:
    if isinstance(value, str):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"not a yes/no value: {value!r}")
    return bool(value)


def _int(value) -> int:
    return int(value, 0) if isinstance(value, str) else int(value)


def parse_passkey(value) -> int | None:
    if value is None:
        return None
    number = int(value, 10) if isinstance(value, str) else int(value)
    if not 0 <= number <= 999999:
        raise ValueError(f"a passkey is 000000 to 999999, not {value!r}")
    return number


@dataclasses.dataclass
class PairingFault:
    """A one-shot misbehaviour: `kind` at the `nth` PDU of `stage` this side sends."""

    kind: str
    stage: str
    nth: int = 1
    reason: int | None = None  # drop_link: the HCI reason; refuse: the Pairing Failed reason
    fired: bool = False

    @classmethod
    def parse(cls, spec: dict) -> PairingFault:
        kind = str(spec.get("fault", "")).replace("-", "_")
        if kind not in FAULT_KINDS:
            raise ValueError(f"fault is one of {', '.join(FAULT_KINDS)}, not {kind!r}")
        stage = str(spec.get("at") or DEFAULT_STAGE[kind]).replace("-", "_")
        if stage not in FAULT_STAGES:
            raise ValueError(f"at is one of {', '.join(FAULT_STAGES)}, not {stage!r}")
        reason = spec.get("reason")
        return cls(kind=kind, stage=stage, nth=max(1, _int(spec.get("nth", 1))),
                   reason=None if reason is None else _int(reason))

    @classmethod
    def parse_text(cls, text: str) -> PairingFault:
        """The command line's form: KIND[@STAGE][#NTH][:REASON], e.g. silent@random, drop-link:0x13."""
        spec: dict = {}
        rest = text
        if ":" in rest:
            rest, spec["reason"] = rest.split(":", 1)
        if "#" in rest:
            rest, spec["nth"] = rest.split("#", 1)
        if "@" in rest:
            rest, spec["at"] = rest.split("@", 1)
        spec["fault"] = rest
        return cls.parse(spec)

    def describe(self) -> dict:
        return {"fault": self.kind, "at": self.stage, "nth": self.nth, "reason": self.reason,
                "fired": self.fired}


@dataclasses.dataclass
class PairingOptions:
    io: str = "none"
    sc: str = "allowed"  # "only" (SC Only mode), "allowed" (SC preferred, legacy accepted), "off" (legacy)
    bonding: bool = True
    mitm: bool = False
    passkey: int | None = None  # None: a random one to display, and wait for `passkey` to enter one
    compare: str = "yes"  # numeric comparison: "yes", "no", or "ask" (wait for the `compare` command)
    max_key_size: int = 16
    min_key_size: int = 7
    smp_timeout: float = 30.0
    reveal_keys: bool = False
    security_request: bool = False  # peripheral: send a Security Request on every connection
    answer_security_request: bool = True  # central: encrypt with the bond, or pair, when asked
    irk: bytes | None = None  # our IRK (None: a random non-zero one per process)

    FIELDS = {"io", "sc", "bonding", "mitm", "passkey", "compare", "max_key_size", "min_key_size",
              "smp_timeout", "reveal_keys", "security_request", "answer_security_request"}
    JSON_NAMES = {"maxKeySize": "max_key_size", "minKeySize": "min_key_size", "smpTimeout": "smp_timeout",
                  "revealKeys": "reveal_keys", "securityRequest": "security_request",
                  "answerSecurityRequest": "answer_security_request"}

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if self.io not in IO_CAPABILITIES:
            raise ValueError(f"io is one of {', '.join(IO_CAPABILITIES)}, not {self.io!r}")
        if self.sc not in ("only", "allowed", "off"):
            raise ValueError(f"sc is only, allowed or off, not {self.sc!r}")
        if self.compare not in ("yes", "no", "ask"):
            raise ValueError(f"compare is yes, no or ask, not {self.compare!r}")
        if not 7 <= self.max_key_size <= 16 or not 7 <= self.min_key_size <= 16:
            raise ValueError("key sizes are 7 to 16 octets")
        if self.smp_timeout <= 0:
            raise ValueError("the SMP timeout must be positive")
        if self.irk is not None and (len(self.irk) != 16 or not any(self.irk)):
            raise ValueError("an IRK is 16 octets, not all zero")

    def update(self, request: dict) -> None:
        """Applies the fields of a control request (JSON names or Python names): all of them,
        or none when one is wrong."""
        changed = self.snapshot()
        changed._apply(request)
        changed.validate()
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(changed, field.name))

    def _apply(self, request: dict) -> None:
        for name, value in request.items():
            name = self.JSON_NAMES.get(name, name)
            if name not in self.FIELDS:
                continue
            if name in ("bonding", "mitm", "reveal_keys", "security_request", "answer_security_request"):
                value = _bool(value)
            elif name == "passkey":
                value = parse_passkey(value)
            elif name in ("max_key_size", "min_key_size"):
                value = _int(value)
            elif name == "smp_timeout":
                value = float(value)
            elif name == "compare" and isinstance(value, bool):
                value = "yes" if value else "no"
            setattr(self, name, value)

    def snapshot(self) -> PairingOptions:
        return dataclasses.replace(self)

    def describe(self) -> dict:
        return {"io": self.io, "sc": self.sc, "bonding": self.bonding, "mitm": self.mitm,
                "passkey": None if self.passkey is None else f"{self.passkey:06d}",
                "compare": self.compare, "maxKeySize": self.max_key_size, "minKeySize": self.min_key_size,
                "smpTimeout": self.smp_timeout, "revealKeys": self.reveal_keys,
                "securityRequest": self.security_request,
                "answerSecurityRequest": self.answer_security_request}


@dataclasses.dataclass
class LinkSecurity:
    encrypted: bool = False
    authenticated: bool = False
    sc: bool = False
    key_size: int = 0
    cause: str | None = None  # "pairing" or "bond"

    def describe(self) -> dict:
        return {"encrypted": self.encrypted, "authenticated": self.authenticated, "sc": self.sc,
                "keySize": self.key_size, "cause": self.cause}


class PeerDelegate(PairingDelegate):
    """What the peer's 'user' does: fixed answers from the options, or answers a test gives
    through the control channel (`passkey`, `compare`) while the pairing waits."""

    def __init__(self, agent: PairingAgent, connection) -> None:
        options = agent.options
        distribution = (KeyDistribution.ENC_KEY | KeyDistribution.ID_KEY) if options.bonding else KeyDistribution(0)
        super().__init__(io_capability=PairingDelegate.IoCapability(IO_CAPABILITIES[options.io]),
                         local_initiator_key_distribution=distribution,
                         local_responder_key_distribution=distribution,
                         maximum_encryption_key_size=options.max_key_size)
        self.agent = agent
        self.connection = connection

    async def accept(self) -> bool:
        return True

    async def confirm(self, auto: bool = False) -> bool:
        return True  # Just Works needs no one

    async def compare_numbers(self, number: int, digits: int) -> bool:
        return await self.agent.answer_comparison(self.connection, number)

    async def get_number(self) -> int | None:
        return await self.agent.passkey_to_enter(self.connection)

    async def generate_passkey(self) -> int:
        passkey = self.agent.options.passkey
        return passkey if passkey is not None else secrets.randbelow(1000000)

    async def display_number(self, number: int, digits: int) -> None:
        self.agent.events.emit("passkey_displayed", passkey=f"{number:06d}",
                               peer=self.agent.peer_label(self.connection))


class PairingAgent:
    def __init__(self, device, options: PairingOptions | None = None, events: EventLog | None = None,
                 bonds: BondStore | None = None) -> None:
        self.device = device
        self.options = options or PairingOptions()
        self.events = events or EventLog()
        self.bonds = bonds or BondStore()
        self.faults: list[PairingFault] = []
        self.security: dict[int, LinkSecurity] = {}
        self.expected_cause: dict[int, str] = {}
        self.pairings = 0
        self.encryptions_without_pairing = 0
        self._passkeys: list[int] = []  # entered through the control channel before being asked
        self._passkey_waiters: list[asyncio.Future] = []
        self._answers: list[bool] = []
        self._answer_waiters: list[asyncio.Future] = []
        # Stock: an all-zero IRK unless the configuration names one.
        device.irk = self.options.irk or self._nonzero_irk()
        device.smp_manager = PeerManager(device, self._pairing_config, agent=self)
        device.host.long_term_key_provider = self._long_term_key
        device.on(device.EVENT_CONNECTION, self._on_connection)

    @staticmethod
    def _nonzero_irk() -> bytes:
        while True:
            irk = secrets.token_bytes(16)
            if any(irk):
                return irk

    def _pairing_config(self, connection) -> PairingConfig:
        return PairingConfig(sc=self.options.sc != "off", mitm=self.options.mitm,
                             bonding=self.options.bonding, delegate=PeerDelegate(self, connection))

    def peer_label(self, connection) -> str | None:
        return address_label(connection.peer_address) if connection is not None else None

    @property
    def manager(self) -> PeerManager:
        return self.device.smp_manager

    # -- faults ----------------------------------------------------------------------------
    def add_fault(self, fault: PairingFault) -> None:
        self.faults.append(fault)

    def clear_faults(self) -> None:
        self.faults.clear()

    def take_fault(self, stage: str, nth: int, is_initiator: bool, kind: str | None = None) -> PairingFault | None:
        for fault in self.faults:
            if fault.fired or fault.stage != stage or fault.nth != nth:
                continue
            if kind is not None and fault.kind != kind:
                continue
            if kind is None and fault.kind == "refuse":
                continue
            fault.fired = True
            return fault
        return None

    # -- user input ------------------------------------------------------------------------
    def enter_passkey(self, passkey: int) -> bool:
        """A passkey typed now: to the pairing waiting for one, or kept for the next one."""
        while self._passkey_waiters:
            waiter = self._passkey_waiters.pop(0)
            if not waiter.done():
                waiter.set_result(passkey)
                return True
        self._passkeys.append(passkey)
        return False

    def answer(self, accepted: bool) -> bool:
        while self._answer_waiters:
            waiter = self._answer_waiters.pop(0)
            if not waiter.done():
                waiter.set_result(accepted)
                return True
        self._answers.append(accepted)
        return False

    async def passkey_to_enter(self, connection) -> int | None:
        peer = self.peer_label(connection)
        if self.options.passkey is not None:
            passkey = self.options.passkey
        elif self._passkeys:
            passkey = self._passkeys.pop(0)
        else:
            self.events.emit("passkey_requested", peer=peer)
            waiter = asyncio.get_running_loop().create_future()
            self._passkey_waiters.append(waiter)
            try:
                passkey = await asyncio.wait_for(waiter, self.options.smp_timeout)
            except asyncio.TimeoutError:
                return None
        self.events.emit("passkey_entered", passkey=f"{passkey:06d}", peer=peer)
        return passkey

    async def answer_comparison(self, connection, number: int) -> bool:
        if self.options.compare != "ask":
            return self.options.compare == "yes"
        if self._answers:
            return self._answers.pop(0)
        self.events.emit("numeric_comparison_requested", value=f"{number:06d}", peer=self.peer_label(connection))
        waiter = asyncio.get_running_loop().create_future()
        self._answer_waiters.append(waiter)
        try:
            return await asyncio.wait_for(waiter, self.options.smp_timeout)
        except asyncio.TimeoutError:
            return False

    # -- connections and encryption --------------------------------------------------------
    def _on_connection(self, connection) -> None:
        handle = connection.handle
        self.security[handle] = LinkSecurity()
        self.events.emit("connected", peer=self.peer_label(connection), handle=handle,
                         role="central" if connection.role == hci.Role.CENTRAL else "peripheral",
                         at=address_label(connection.self_address))
        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_CHANGE,
                      lambda: self._on_encryption_change(connection))
        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_FAILURE,
                      lambda status: self._on_encryption_failure(connection, status))
        connection.on(connection.EVENT_DISCONNECTION, lambda reason: self._on_disconnection(connection, reason))
        connection.on(connection.EVENT_SECURITY_REQUEST, lambda auth_req: self._answer_security_request(connection))
        if self.options.security_request and connection.role == hci.Role.PERIPHERAL:
            asyncio.get_running_loop().call_soon(self._send_security_request, connection)

    def _send_security_request(self, connection) -> None:
        if connection.handle in self.security:
            self.device.request_pairing(connection)

    def _on_disconnection(self, connection, reason: int) -> None:
        self.security.pop(connection.handle, None)
        self.expected_cause.pop(connection.handle, None)
        self.events.emit("disconnected", peer=self.peer_label(connection), handle=connection.handle,
                         reason=reason)

    def expect_encryption(self, connection, cause: str) -> None:
        self.expected_cause[connection.handle] = cause

    def _active_session(self, connection) -> PeerSession | None:
        session = self.manager.sessions.get(connection.handle)
        if session is not None and not session.completed:
            return session
        return None

    def bond_for(self, connection) -> Bond | None:
        bond = self.bonds.find(connection.peer_address)
        if bond is None and connection.peer_resolvable_address is not None:
            bond = self.bonds.find(connection.peer_resolvable_address)
        return bond

    async def _long_term_key(self, handle: int, rand: bytes, ediv: int) -> bytes | None:
        connection = self.device.lookup_connection(handle)
        if connection is None:
            return None
        session = self._active_session(connection)
        fields: dict = {"peer": self.peer_label(connection)}
        if self.options.reveal_keys:
            fields.update(ediv=ediv, rand=bytes(rand).hex())
        if session is not None:
            key = session.pairing_key(ediv, bytes(rand))
            cause = "pairing"
        else:
            bond = self.bond_for(connection)
            key = bond.key_for_request(ediv, bytes(rand)) if bond is not None else None
            cause = "bond"
            fields["bonded"] = bond is not None
        self.expected_cause[handle] = cause
        self.events.emit("ltk_request", found=key is not None, cause=cause, **fields)
        return key

    def _on_encryption_change(self, connection) -> None:
        handle = connection.handle
        if not connection.is_encrypted:
            self.security[handle] = LinkSecurity()
            self.events.emit("encryption_changed", peer=self.peer_label(connection), encrypted=False)
            return
        session = self._active_session(connection)
        cause = self.expected_cause.pop(handle, None) or ("pairing" if session is not None else "bond")
        if cause == "pairing" and session is not None:
            security = LinkSecurity(True, session.authenticated, session.sc, session.key_size, "pairing")
        else:
            bond = self.bond_for(connection)
            if bond is not None:
                security = LinkSecurity(True, bond.authenticated, bond.sc, bond.key_size, "bond")
            else:  # encrypted with a key we cannot name: claim nothing
                security = LinkSecurity(True, False, False, 0, "unknown")
            self.encryptions_without_pairing += 1
        self.security[handle] = security
        # Stock sets authenticated and sc on every LE encryption; put the truth back.
        connection.authenticated = security.authenticated
        connection.sc = security.sc
        connection.encryption_key_size = security.key_size
        self.events.emit("encryption_changed", peer=self.peer_label(connection), handle=handle,
                         encrypted=True, keySize=security.key_size, authenticated=security.authenticated,
                         sc=security.sc, cause=security.cause, pairing=security.cause == "pairing")

    def _on_encryption_failure(self, connection, status: int) -> None:
        cause = self.expected_cause.pop(connection.handle, None)
        self.events.emit("encryption_failed", peer=self.peer_label(connection), status=status, cause=cause)

    # -- encrypting with a bond (central) ---------------------------------------------------
    async def encrypt_with_bond(self, connection, timeout: float = 5.0) -> LinkSecurity:
        """LE Enable Encryption with the bond's key (the peer's own, for legacy), then the
        link's security once the controller says it is encrypted."""
        bond = self.bond_for(connection)
        if bond is None:
            raise LookupError(f"no bond with {self.peer_label(connection)}: pair first")
        key = bond.key_as_central()
        if key is None:
            raise LookupError(f"the bond with {self.peer_label(connection)} holds no key for us as central "
                              "(the peer distributed no LTK)")
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def changed() -> None:
            if not done.done():
                done.set_result(None)

        def failed(status: int) -> None:
            if not done.done():
                done.set_exception(ConnectionError(f"encryption failed: HCI status 0x{status:02X}"))

        def gone(reason: int) -> None:
            if not done.done():
                done.set_exception(ConnectionError(f"the link went down: HCI reason 0x{reason:02X}"))

        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_CHANGE, changed)
        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_FAILURE, failed)
        connection.on(connection.EVENT_DISCONNECTION, gone)
        self.expect_encryption(connection, "bond")
        try:
            await self.device.send_async_command(hci.HCI_LE_Enable_Encryption_Command(
                connection_handle=connection.handle, random_number=key.rand,
                encrypted_diversifier=key.ediv, long_term_key=key.ltk))
            await asyncio.wait_for(done, timeout)
        finally:
            connection.remove_listener(connection.EVENT_CONNECTION_ENCRYPTION_CHANGE, changed)
            connection.remove_listener(connection.EVENT_CONNECTION_ENCRYPTION_FAILURE, failed)
            connection.remove_listener(connection.EVENT_DISCONNECTION, gone)
        return self.security.get(connection.handle, LinkSecurity())

    def _answer_security_request(self, connection) -> None:
        if not self.options.answer_security_request or connection.role != hci.Role.CENTRAL:
            return

        async def answer() -> None:
            try:
                if self.bond_for(connection) is not None:
                    await self.encrypt_with_bond(connection)
                else:
                    await self.device.pair(connection)
            except Exception as error:  # reported through the events already
                log.info("answering a security request: %s", error)
        asyncio.get_running_loop().create_task(answer())

    # -- reports from the sessions ---------------------------------------------------------
    def on_security_request(self, connection, auth_req: int) -> None:
        self.events.emit("security_request", direction="received", peer=self.peer_label(connection),
                         **auth_req_fields(auth_req))

    def on_pairing_started(self, session: PeerSession, role: str, request: dict) -> None:
        self.events.emit("pairing_started", peer=self.peer_label(session.connection), role=role,
                         request=request)

    def on_method(self, session: PeerSession, response: dict) -> None:
        fields = {"peer": self.peer_label(session.connection), "method": session.method_name,
                  "sc": session.sc, "legacy": not session.sc, "bonding": session.bonding,
                  "keySize": session.key_size, "response": response}
        if session.pairing_method.name == "PASSKEY":
            fields["passkeyDisplayedBy"] = "us" if session.passkey_display else "peer"
        self.events.emit("method", **fields)

    def on_paired(self, session: PeerSession, identity_address) -> None:
        connection = session.connection
        peer = self.peer_label(connection)
        seconds = round(session.loop.time() - session.started_at, 4)
        for direction, kinds in (("sent", session.kinds_sent), ("received", session.kinds_received)):
            fields = {"peer": peer, "direction": direction, "kinds": list(kinds)}
            if self.options.reveal_keys:
                fields["values"] = self._key_values(session, direction)
            self.events.emit("keys", **fields)
        self.pairings += 1
        self.events.emit("paired", peer=peer, method=session.method_name, sc=session.sc,
                         authenticated=session.authenticated, bonded=bool(session.bonding),
                         keySize=session.key_size, seconds=seconds)
        if not session.bonding:
            return  # stock keeps keys anyway; a bond needs both sides to ask (§3.5.1)
        identity = session.peer_bd_addr or identity_address or connection.peer_address
        bond = Bond(identity=identity, sc=session.sc, authenticated=session.authenticated,
                    key_size=session.key_size, method=session.method_name,
                    irk=session.peer_identity_resolving_key,
                    kinds_sent=tuple(session.kinds_sent), kinds_received=tuple(session.kinds_received))
        if session.sc:
            bond.ltk = session.ltk
        else:
            if "ltk" in session.kinds_sent:
                bond.ours = DistributedKey(session.ltk, session.ltk_ediv, session.ltk_rand)
            if session.peer_ltk is not None:
                bond.theirs = DistributedKey(session.peer_ltk, session.peer_ediv or 0,
                                             session.peer_rand or bytes(8))
        self.bonds.store(bond, connection.peer_address)
        self.events.emit("bonded", peer=peer, identity=address_label(identity), method=bond.method,
                         sc=bond.sc, authenticated=bond.authenticated, keySize=bond.key_size)

    def _key_values(self, session: PeerSession, direction: str) -> dict:
        values: dict = {}
        if direction == "sent":
            if "ltk" in session.kinds_sent:
                values.update(ltk=session.ltk.hex(), ediv=session.ltk_ediv, rand=session.ltk_rand.hex())
            if "irk" in session.kinds_sent:
                values["irk"] = self.device.irk.hex()
        else:
            if session.peer_ltk is not None:
                values.update(ltk=session.peer_ltk.hex(), ediv=session.peer_ediv,
                              rand=(session.peer_rand or b"").hex())
            if session.peer_identity_resolving_key is not None:
                values["irk"] = session.peer_identity_resolving_key.hex()
            if session.peer_bd_addr is not None:
                values["identityAddress"] = address_label(session.peer_bd_addr)
        if session.sc and getattr(session, "ltk", None) is not None:
            values["derivedLtk"] = session.ltk.hex()
        return values

    def on_pairing_failed(self, session: PeerSession, reason: int | None, by: str) -> None:
        seconds = round(session.loop.time() - session.started_at, 4)
        self.events.emit("pairing_failed", peer=self.peer_label(session.connection), reason=reason,
                         reasonName=reason_name(reason), by=by, seconds=seconds)

    # -- for the control channel and state --------------------------------------------------
    def link_security(self, connection) -> LinkSecurity:
        if connection is None:
            return LinkSecurity()
        return self.security.get(connection.handle, LinkSecurity())

    def state(self) -> dict:
        return {"options": self.options.describe(), "faults": [f.describe() for f in self.faults],
                "bonds": self.bonds.describe(self.options.reveal_keys), "pairings": self.pairings,
                "encryptionsWithoutPairing": self.encryptions_without_pairing,
                "irkNonZero": any(self.device.irk)}
