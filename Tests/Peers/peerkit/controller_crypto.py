"""The crypto commands bumble 0.0.236's virtual controller leaves unanswered, for hosts that
use them (controller A; our own host does its AES and P-256 itself, a kernel or another stack
may not).

Stock, `LE Encrypt` and `LE Generate DHKey` reach the generic handler, which answers nothing at
all, and `LE Read Local P-256 Public Key` is accepted without its completion event. Here
(Core Vol 4 Part E):

* §7.8.22 LE Encrypt: Command Complete with AES-128 of the plaintext under the key (both, and
  the result, least significant octet first as HCI carries them);
* §7.8.36 LE Read Local P-256 Public Key: Command Status, then LE Read Local P-256 Public Key
  Complete (subevent 0x08) with a fresh key pair's X and Y;
* §7.8.37 LE Generate DHKey (v1): Command Status, then LE Generate DHKey Complete (subevent
  0x09) with the Diffie-Hellman key, or status Invalid HCI Command Parameters (0x12) when the
  remote key is not a point of P-256 (checked before any use, as Vol 3 Part H §2.3.5.6.1 asks).

A DHKey asked for before any local key was read uses a key pair made for it (and kept).
"""
from __future__ import annotations

import logging
import struct

from bumble import crypto, hci

from .smp_session import on_p256

log = logging.getLogger("peer.crypto")

HCI_EVENT_PACKET = 0x04
COMMAND_COMPLETE = 0x0E
COMMAND_STATUS = 0x0F
LE_META = 0x3E
READ_LOCAL_P256_COMPLETE = 0x08
GENERATE_DHKEY_COMPLETE = 0x09
INVALID_PARAMETERS = 0x12


def _event(code: int, parameters: bytes) -> bytes:
    return bytes([HCI_EVENT_PACKET, code, len(parameters)]) + parameters


class ControllerCrypto:
    """Mixed into a bumble `Controller` subclass (before Controller in the bases)."""

    _p256_key: crypto.EccKey | None = None

    def _complete(self, op_code: int, return_parameters: bytes) -> None:
        self.send_hci_packet(_event(COMMAND_COMPLETE, struct.pack("<BH", 1, op_code) + return_parameters))

    def _status(self, op_code: int, status: int) -> None:
        self.send_hci_packet(_event(COMMAND_STATUS, struct.pack("<BBH", status, 1, op_code)))

    def _local_p256(self) -> crypto.EccKey:
        if self._p256_key is None:
            self._p256_key = crypto.EccKey.generate()
        return self._p256_key

    def on_hci_le_encrypt_command(self, command: hci.HCI_Command) -> None:
        parameters = command.parameters
        if len(parameters) != 32:
            self._complete(command.op_code, bytes([INVALID_PARAMETERS]) + bytes(16))
            return
        key, plaintext = parameters[:16], parameters[16:]
        # bumble's e() takes and gives little-endian octets, HCI's order.
        self._complete(command.op_code, bytes([hci.HCI_SUCCESS]) + crypto.e(key, plaintext))

    def on_hci_le_read_local_p_256_public_key_command(self, command: hci.HCI_Command) -> None:
        self._p256_key = crypto.EccKey.generate()
        self._status(command.op_code, hci.HCI_SUCCESS)
        key = self._p256_key
        self.send_hci_packet(_event(LE_META, bytes([READ_LOCAL_P256_COMPLETE, hci.HCI_SUCCESS])
                                    + key.x[::-1] + key.y[::-1]))

    def on_hci_le_generate_dhkey_command(self, command: hci.HCI_Command) -> None:
        parameters = command.parameters
        if len(parameters) != 64:
            self._status(command.op_code, INVALID_PARAMETERS)
            return
        x, y = parameters[:32], parameters[32:]
        self._status(command.op_code, hci.HCI_SUCCESS)
        if not on_p256(x, y):
            log.info("LE Generate DHKey: the remote key is not on P-256")
            self.send_hci_packet(_event(LE_META, bytes([GENERATE_DHKEY_COMPLETE, INVALID_PARAMETERS]) + bytes(32)))
            return
        dhkey = self._local_p256().dh(x[::-1], y[::-1])[::-1]
        self.send_hci_packet(_event(LE_META, bytes([GENERATE_DHKEY_COMPLETE, hci.HCI_SUCCESS]) + dhkey))


CRYPTO_COMMANDS = {hci.HCI_LE_ENCRYPT_COMMAND, hci.HCI_LE_READ_LOCAL_P_256_PUBLIC_KEY_COMMAND,
                   hci.HCI_LE_GENERATE_DHKEY_COMMAND}
