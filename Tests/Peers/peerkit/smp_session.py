"""bumble 0.0.236's Security Manager with its defects fixed, and faults a test can ask for.

`PeerSession` subclasses bumble's `smp.Session` and `PeerManager` its `smp.Manager`: bumble keeps
running the protocol (its state machine and its crypto are what a test pairs against, written
by nobody here); these classes only correct what the stock code gets wrong, each override
calling into bumble where bumble is right, and report what happened through the agent
(`pairing.PairingAgent`). Stock defects fixed here (measured in
`../shared/notes/bumble-as-a-test-peer.md`, "Pairing against bumble"):

* MITM not enforced: a side that asked for MITM protection goes on with Just Works. Here either
  role refuses with Authentication Requirements (0x03), and so does Secure Connections Only mode
  for a peer without SC (Core Vol 3 Part H §2.3.5.1 and §2.3.6).
* A refused numeric comparison was reported as Confirm Value Failed (0x04); it is Numeric
  Comparison Failed (0x0C, §3.5.5).
* A public key off the P-256 curve ended in an exception and Unspecified Reason (0x08); it is
  checked before any use and refused with DHKey Check Failed (0x0B), as Erratum 10734 requires
  (§2.3.5.6.1).
* Passkey 000000 could not be used with Secure Connections (an `assert passkey` on 0).
* No SMP timeout: here 30 s (configurable for tests) restarted by every PDU queued, after which
  the pairing fails, nothing more is sent, and the link takes no more SMP (§3.4).
* Legacy EDIV and Rand were zero, the values that name a Secure Connections key in an LTK
  Request; here they are random (§2.4.2.1 leaves them to the distributing side).
* Keys were kept when either side did not ask to bond (the agent stores a bond only when both
  did, §3.5.1), and every pairing was reported as authenticated (the agent reports what the
  method gives: Just Works is unauthenticated, §2.3.5.1).
* The negotiated key size (the smaller of the two maxima, §2.3.4) was never applied; here it is
  negotiated, checked against a minimum (Encryption Key Size, 0x06) and the STK/LTK masked to it.

A failed or completed pairing does not keep its session against a new Pairing Request on the
same link (stock bumble would feed the request to the finished session).
"""
from __future__ import annotations

import asyncio
import collections
import logging
import secrets

from bumble import crypto, smp
from bumble.smp import (
    AuthReq,
    CommandCode,
    ErrorCode,
    PairingMethod,
    SMP_Command,
    SMP_Encryption_Information_Command,
    SMP_Identity_Address_Information_Command,
    SMP_Identity_Information_Command,
    SMP_Master_Identification_Command,
    SMP_Pairing_Confirm_Command,
    SMP_Pairing_DHKey_Check_Command,
    SMP_Pairing_Failed_Command,
    SMP_Pairing_Public_Key_Command,
    SMP_Pairing_Random_Command,
    SMP_Pairing_Request_Command,
    SMP_Pairing_Response_Command,
    SMP_Signing_Information_Command,
)

log = logging.getLogger("peer.smp")

# P-256 (FIPS 186-4 D.1.2.3, the curve of Core Vol 3 Part H §2.3.5.6.1): y² = x³ − 3x + b mod p.
P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B

METHOD_NAMES = {
    PairingMethod.JUST_WORKS: "just-works",
    PairingMethod.NUMERIC_COMPARISON: "numeric-comparison",
    PairingMethod.PASSKEY: "passkey-entry",
    PairingMethod.OOB: "oob",
}

# What the fault knobs and the events call each PDU.
STAGES = {
    CommandCode.PAIRING_REQUEST: "pairing_request",
    CommandCode.PAIRING_RESPONSE: "pairing_response",
    CommandCode.PAIRING_CONFIRM: "confirm",
    CommandCode.PAIRING_RANDOM: "random",
    CommandCode.PAIRING_FAILED: "pairing_failed",
    CommandCode.PAIRING_PUBLIC_KEY: "public_key",
    CommandCode.PAIRING_DHKEY_CHECK: "dhkey_check",
    CommandCode.ENCRYPTION_INFORMATION: "keys",
    CommandCode.MASTER_IDENTIFICATION: "keys",
    CommandCode.IDENTITY_INFORMATION: "keys",
    CommandCode.IDENTITY_ADDRESS_INFORMATION: "keys",
    CommandCode.SIGNING_INFORMATION: "keys",
}

KEY_KINDS = {
    SMP_Encryption_Information_Command: "ltk",
    SMP_Master_Identification_Command: "ediv-rand",
    SMP_Identity_Information_Command: "irk",
    SMP_Identity_Address_Information_Command: "identity-address",
    SMP_Signing_Information_Command: "csrk",
}


def on_p256(x_le: bytes, y_le: bytes) -> bool:
    """Whether the point (as sent in Pairing Public Key: little-endian X and Y) is on P-256."""
    x = int.from_bytes(x_le, "little")
    y = int.from_bytes(y_le, "little")
    if not (0 <= x < P256_P and 0 <= y < P256_P):
        return False
    return (y * y - (x * x * x - 3 * x + P256_B)) % P256_P == 0


def reason_name(reason: int | None) -> str:
    if reason is None:
        return "SMP timeout"
    try:
        return ErrorCode(reason).name
    except ValueError:
        return f"0x{reason:02X}"


def auth_req_fields(auth_req: int) -> dict:
    return {"bonding": bool(auth_req & AuthReq.BONDING), "mitm": bool(auth_req & AuthReq.MITM),
            "sc": bool(auth_req & AuthReq.SC), "keypress": bool(auth_req & AuthReq.KEYPRESS),
            "ct2": bool(auth_req & AuthReq.CT2)}


def key_distribution_names(value: int) -> list[str]:
    names = [(smp.KeyDistribution.ENC_KEY, "enc"), (smp.KeyDistribution.ID_KEY, "id"),
             (smp.KeyDistribution.SIGN_KEY, "sign"), (smp.KeyDistribution.LINK_KEY, "link")]
    return [name for bit, name in names if value & bit]


def features(command: SMP_Pairing_Request_Command | SMP_Pairing_Response_Command) -> dict:
    return {
        "io": smp.IoCapability(command.io_capability).name.lower().replace("_", "-"),
        "oob": bool(command.oob_data_flag),
        **auth_req_fields(command.auth_req),
        "maxKeySize": command.maximum_encryption_key_size,
        "initiatorKeys": key_distribution_names(command.initiator_key_distribution),
        "responderKeys": key_distribution_names(command.responder_key_distribution),
    }


class SmpTimeout(Exception):
    """The 30 s Security Manager timer (Core Vol 3 Part H §3.4) ran out."""


class PeerSession(smp.Session):
    def __init__(self, manager: PeerManager, connection, pairing_config, is_initiator: bool) -> None:
        super().__init__(manager, connection, pairing_config, is_initiator)
        self.agent = manager.agent
        self.options = self.agent.options.snapshot()
        self.loop = asyncio.get_running_loop()
        self.started_at = self.loop.time()
        # Legacy: our own EDIV and Rand (stock: zero, which names an SC key in an LTK Request).
        self.ltk_ediv = secrets.randbits(16) or 1
        self.ltk_rand = secrets.token_bytes(8)
        self.key_size: int = self.options.max_key_size
        self.timed_out = False
        self.silenced = False
        self.failed_by: str | None = None
        self.failure_reason: int | None = None
        self.kinds_sent: list[str] = []
        self.kinds_received: list[str] = []
        self.sent_counts: collections.Counter = collections.Counter()
        self.method_reported = False
        self._timer: asyncio.TimerHandle | None = None
        self._arm_timer()

    # -- what the link gets from this pairing ----------------------------------------------
    @property
    def method_name(self) -> str:
        return METHOD_NAMES.get(self.pairing_method, str(self.pairing_method))

    @property
    def authenticated(self) -> bool:
        # Passkey Entry and Numeric Comparison protect against MITM; Just Works does not, and
        # OOB would only with OOB data, which these peers never have (§2.3.5.1).
        return self.pairing_method in (PairingMethod.PASSKEY, PairingMethod.NUMERIC_COMPARISON)

    def mask(self, key: bytes | None) -> bytes | None:
        """The key shortened to the negotiated size: its most significant octets zeroed
        (§2.3.4; bumble keeps keys little-endian, so those are the last ones)."""
        if key is None or self.key_size >= 16:
            return key
        return key[:self.key_size] + bytes(16 - self.key_size)

    def pairing_key(self, ediv: int, rand: bytes) -> bytes | None:
        """The key an LTK Request during this pairing is answered with: the STK (legacy) or
        the LTK (SC), both asked for with EDIV and Rand zero (§2.4.4.1, §2.3.5.6)."""
        if self.completed or ediv != 0 or rand != bytes(8):
            return None
        if self.sc:
            return self.mask(getattr(self, "ltk", None))
        return self.mask(self.stk)

    # -- the SMP timer (§3.4) --------------------------------------------------------------
    def _arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_later(self.options.smp_timeout, self._on_timeout)

    def stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_timeout(self) -> None:
        self._timer = None
        if self.completed:
            return
        self.timed_out = True
        self.completed = True
        self.agent.on_pairing_failed(self, None, "timeout")
        if self.pairing_result is not None and not self.pairing_result.done():
            self.pairing_result.set_exception(
                SmpTimeout(f"no SMP PDU completed the pairing within {self.options.smp_timeout} s"))

    # -- sending, with the faults a test asked for -----------------------------------------
    def send_command(self, command: SMP_Command) -> None:
        if self.timed_out:
            log.info("SMP timed out on this link: not sending %s", command.name)
            return
        if self.silenced:
            log.info("silent (fault): not sending %s", command.name)
            return
        stage = STAGES.get(command.code, command.name.lower())
        self.sent_counts[stage] += 1
        fault = self.agent.take_fault(stage, self.sent_counts[stage], self.is_initiator)
        if fault is not None:
            command = self._apply_fault(fault, command, stage)
            if command is None:
                return
        kind = KEY_KINDS.get(type(command))
        if kind is not None:
            self.kinds_sent.append(kind)
        if command.code == CommandCode.PAIRING_FAILED:
            self.stop_timer()
        else:
            self._arm_timer()
        super().send_command(command)

    def _apply_fault(self, fault, command: SMP_Command, stage: str) -> SMP_Command | None:
        self.agent.events.emit("fault", fault=fault.kind, at=stage, peer=self.agent.peer_label(self.connection))
        if fault.kind == "silent":
            self.silenced = True
            return None
        if fault.kind == "drop_link":
            self.silenced = True
            reason = fault.reason if fault.reason is not None else 0x08

            async def drop() -> None:
                try:
                    await self.connection.disconnect(reason)
                except Exception as error:  # already gone
                    log.info("drop_link: %s", error)
            self.loop.create_task(drop())
            return None
        if fault.kind == "wrong_confirm" and isinstance(command, SMP_Pairing_Confirm_Command):
            value = bytearray(command.confirm_value)
            value[0] ^= 0x01
            return SMP_Pairing_Confirm_Command(confirm_value=bytes(value))
        if fault.kind == "wrong_dhkey_check" and isinstance(command, SMP_Pairing_DHKey_Check_Command):
            value = bytearray(command.dhkey_check)
            value[0] ^= 0x01
            return SMP_Pairing_DHKey_Check_Command(dhkey_check=bytes(value))
        if fault.kind == "off_curve_key" and isinstance(command, SMP_Pairing_Public_Key_Command):
            y = (int.from_bytes(command.public_key_y, "little") + 1) % P256_P
            return SMP_Pairing_Public_Key_Command(public_key_x=command.public_key_x,
                                                  public_key_y=y.to_bytes(32, "little"))
        return command

    def send_pairing_failed(self, error: ErrorCode) -> None:
        if self.completed:
            return
        self.failed_by = "us"
        super().send_pairing_failed(error)

    def on_pairing_failure(self, reason: ErrorCode) -> None:
        if self.completed:
            return
        self.stop_timer()
        self.failure_reason = int(reason)
        super().on_pairing_failure(reason)

    # -- receiving ---------------------------------------------------------------------------
    def on_smp_command(self, command: SMP_Command) -> None:
        if self.timed_out:
            log.info("SMP timed out on this link: %s ignored", command.name)
            return
        kind = KEY_KINDS.get(type(command))
        if kind is not None:
            self.kinds_received.append(kind)
        if isinstance(command, SMP_Pairing_Failed_Command) and not self.completed:
            self.failed_by = "peer"
        super().on_smp_command(command)

    # -- phase 1: features, the method, and what each side requires ------------------------
    def send_pairing_request_command(self) -> None:
        super().send_pairing_request_command()
        request = SMP_Command.from_bytes(self.preq)
        self.agent.on_pairing_started(self, "initiator", features(request))

    def _preview_method(self, sc: bool, peer_auth_req: int, peer_oob: int,
                        initiator_io: int, responder_io: int) -> PairingMethod:
        """The method stock bumble is about to choose (its own decision function, Tables 2.6
        to 2.8), before it acts on it, so that a requirement it ignores can be enforced."""
        if (sc and (self.oob_data_flag or peer_oob)) or (not sc and self.oob_data_flag and peer_oob):
            return PairingMethod.OOB
        saved = (self.sc, self.pairing_method, self.passkey_display)
        self.sc = sc
        self.decide_pairing_method(peer_auth_req, initiator_io, responder_io)
        method = self.pairing_method
        self.sc, self.pairing_method, self.passkey_display = saved
        return method

    def _requirement_failure(self, peer_sc: bool, method: PairingMethod, peer_max_key: int) -> ErrorCode | None:
        if self.options.sc == "only" and not peer_sc:
            return ErrorCode.AUTHENTICATION_REQUIREMENTS
        if self.options.mitm and method in (PairingMethod.JUST_WORKS, PairingMethod.OOB):
            return ErrorCode.AUTHENTICATION_REQUIREMENTS
        if not 7 <= peer_max_key <= 16:
            return ErrorCode.INVALID_PARAMETERS
        negotiated = min(peer_max_key, self.options.max_key_size)
        minimum = 16 if self.options.sc == "only" else self.options.min_key_size
        if negotiated < minimum:
            return ErrorCode.ENCRYPTION_KEY_SIZE
        return None

    def on_smp_pairing_request_command(self, command: SMP_Pairing_Request_Command) -> None:
        self.agent.on_pairing_started(self, "responder", features(command))
        refusal = self.agent.take_fault("pairing_request", 1, self.is_initiator, kind="refuse")
        if refusal is not None:
            self.agent.events.emit("fault", fault="refuse", at="pairing_request",
                                   peer=self.agent.peer_label(self.connection))
            self.send_pairing_failed(ErrorCode(refusal.reason if refusal.reason is not None
                                               else ErrorCode.PAIRING_NOT_SUPPORTED))
            return
        peer_sc = bool(command.auth_req & AuthReq.SC)
        sc = self.sc and peer_sc
        method = self._preview_method(sc, command.auth_req, command.oob_data_flag,
                                      command.io_capability, self.io_capability)
        failure = self._requirement_failure(peer_sc, method, command.maximum_encryption_key_size)
        if failure is not None:
            self.preq = bytes(command)
            self.send_pairing_failed(failure)
            return
        self.key_size = min(command.maximum_encryption_key_size, self.options.max_key_size)
        super().on_smp_pairing_request_command(command)

    def send_pairing_response_command(self) -> None:
        super().send_pairing_response_command()
        self._report_method(SMP_Command.from_bytes(self.pres))

    def on_smp_pairing_response_command(self, command: SMP_Pairing_Response_Command) -> None:
        if self.is_initiator and not self.completed:
            peer_sc = bool(command.auth_req & AuthReq.SC)
            sc = self.sc and peer_sc
            method = self._preview_method(sc, command.auth_req, command.oob_data_flag,
                                          self.io_capability, command.io_capability)
            failure = self._requirement_failure(peer_sc, method, command.maximum_encryption_key_size)
            if failure is not None:
                self.pres = bytes(command)
                self.send_pairing_failed(failure)
                return
            self.key_size = min(command.maximum_encryption_key_size, self.options.max_key_size)
        super().on_smp_pairing_response_command(command)
        if self.is_initiator and not self.completed:
            self._report_method(command)

    def _report_method(self, response: SMP_Pairing_Response_Command) -> None:
        if self.method_reported:
            return
        self.method_reported = True
        self.agent.on_method(self, features(response))

    # -- phase 2 fixes ------------------------------------------------------------------------
    def send_pairing_confirm_command(self) -> None:
        if not (self.sc and self.pairing_method == PairingMethod.PASSKEY):
            super().send_pairing_confirm_command()
            return
        # Stock asserts the passkey is truthy, so 000000 stalls; this is f4 with the passkey's
        # bit for this round (§2.3.5.6.3): Cai = f4(PKax, PKbx, Nai, 0x80|rai), Cbi likewise.
        self.r = crypto.r()

        async def send() -> None:
            await self.passkey_ready.wait()
            if self.completed:
                return
            z = bytes([0x80 | ((self.passkey >> self.passkey_step) & 1)])
            if self.is_initiator:
                value = crypto.f4(self.pka, self.pkb, self.r, z)
            else:
                value = crypto.f4(self.pkb, self.pka, self.r, z)
            self.send_command(SMP_Pairing_Confirm_Command(confirm_value=value))

        self.connection.cancel_on_disconnection(send())

    def prompt_user_for_numeric_comparison(self, code: int, next_steps) -> None:
        async def prompt() -> None:
            try:
                accepted = await self.pairing_config.delegate.compare_numbers(code, digits=6)
            except Exception:
                log.exception("numeric comparison")
                accepted = False
            self.agent.events.emit("numeric_comparison", value=f"{code:06d}", accepted=bool(accepted),
                                   peer=self.agent.peer_label(self.connection))
            if self.completed:
                return
            if accepted:
                next_steps()
            else:
                self.send_pairing_failed(ErrorCode.NUMERIC_COMPARISON_FAILED)

        self.connection.cancel_on_disconnection(prompt())

    def on_smp_pairing_public_key_command(self, command: SMP_Pairing_Public_Key_Command) -> None:
        if not on_p256(command.public_key_x, command.public_key_y):
            log.info("peer's public key is not on P-256: DHKey Check Failed")
            self.send_pairing_failed(ErrorCode.DHKEY_CHECK_FAILED)
            return
        super().on_smp_pairing_public_key_command(command)

    def on_smp_pairing_random_command(self, command: SMP_Pairing_Random_Command) -> None:
        super().on_smp_pairing_random_command(command)
        # The STK (legacy) and the LTK (both) exist from here on: shorten them to the
        # negotiated size before they are used or distributed.
        if self.key_size < 16:
            if self.stk is not None:
                self.stk = self.mask(self.stk)
            if getattr(self, "ltk", None) is not None:
                self.ltk = self.mask(self.ltk)

    def start_encryption(self, key: bytes) -> None:
        self.agent.expect_encryption(self.connection, "pairing")
        super().start_encryption(self.mask(key))

    async def on_pairing(self) -> None:
        if not self.completed:
            self.stop_timer()
        await super().on_pairing()


class PeerManager(smp.Manager):
    """bumble's Security Manager for a device, making `PeerSession`s and reporting to the agent."""

    def __init__(self, device, pairing_config_factory, agent) -> None:
        super().__init__(device, pairing_config_factory)
        self.agent = agent
        self.session_proxy = PeerSession

    def _forget(self, handle: int) -> None:
        old = self.sessions.pop(handle, None)
        if old is not None:
            old.stop_timer()
            connection = old.connection
            for event, listener in ((connection.EVENT_DISCONNECTION, old.on_disconnection),
                                    (connection.EVENT_CONNECTION_ENCRYPTION_CHANGE,
                                     old.on_connection_encryption_change),
                                    (connection.EVENT_CONNECTION_ENCRYPTION_KEY_REFRESH,
                                     old.on_connection_encryption_key_refresh)):
                try:
                    connection.remove_listener(event, listener)
                except (KeyError, ValueError):
                    pass

    def on_smp_pdu(self, connection, pdu: bytes) -> None:
        session = self.sessions.get(connection.handle)
        if session is not None and session.timed_out:
            log.info("SMP timed out on this link: PDU 0x%s ignored", pdu[:1].hex())
            return
        code = pdu[0] if pdu else None
        if session is not None and session.completed and code != CommandCode.SECURITY_REQUEST:
            if code == CommandCode.PAIRING_REQUEST:
                self._forget(connection.handle)  # a new pairing on the same link
            else:
                log.info("PDU 0x%02X after the pairing ended: ignored", code if code is not None else 0)
                return
        try:
            super().on_smp_pdu(connection, pdu)
        except Exception as error:  # unknown code, wrong length: bumble's parser raised
            log.info("SMP PDU %s not understood: %s", pdu.hex(), error)
            self.send_command(connection, SMP_Pairing_Failed_Command(reason=ErrorCode.COMMAND_NOT_SUPPORTED
                                                                     if pdu and pdu[0] > 0x0E
                                                                     else ErrorCode.INVALID_PARAMETERS))

    def on_smp_security_request_command(self, connection, request) -> None:
        self.agent.on_security_request(connection, int(request.auth_req))
        super().on_smp_security_request_command(connection, request)

    async def pair(self, connection) -> None:
        session = self.sessions.get(connection.handle)
        if session is not None:
            if session.timed_out:
                raise SmpTimeout("the SMP timer ran out on this link: reconnect to pair again (Core Vol 3 Part H §3.4)")
            if not session.completed:
                raise RuntimeError("a pairing is already going on on this link")
            self._forget(connection.handle)
        await super().pair(connection)

    def request_pairing(self, connection) -> None:
        self.agent.events.emit("security_request", direction="sent", peer=self.agent.peer_label(connection))
        super().request_pairing(connection)

    async def on_pairing(self, session: PeerSession, identity_address, keys) -> None:
        # Not the stock keystore: the agent keeps a bond only when both sides asked to bond.
        self.agent.on_paired(session, identity_address)
        self.device.on_pairing(session.connection, identity_address, keys, session.sc)
        # Stock marks every pairing authenticated; the method decides (§2.3.5.1).
        session.connection.authenticated = session.authenticated
        session.connection.sc = session.sc

    def on_pairing_failure(self, session: PeerSession, reason: ErrorCode) -> None:
        self.agent.on_pairing_failed(session, int(reason), session.failed_by or "peer")
        super().on_pairing_failure(session, reason)

    def on_session_end(self, session) -> None:
        session.stop_timer()
        if self.sessions.get(session.connection.handle) is session:
            del self.sessions[session.connection.handle]
