"""Resolvable private addresses for the peers (Core Vol 6 Part B §1.3.2.2; `ah`, Vol 3 Part H
§2.2.2), written here from the specification rather than taken from bumble, so that a peer's
address and hwprobe's resolver are two independent readings of it.

Values are MSB first, as the specification prints them: an IRK of 16 octets, an address of 6.
"""
from __future__ import annotations

import secrets

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def ah(irk: bytes, prand: bytes) -> bytes:
    """`ah(k, r) = e(k, padding || r) mod 2^24`: the three low octets of one AES block."""
    assert len(irk) == 16 and len(prand) == 3
    encryptor = Cipher(algorithms.AES(irk), modes.ECB()).encryptor()
    block = encryptor.update(bytes(13) + prand) + encryptor.finalize()
    return block[-3:]


def make_rpa(irk: bytes) -> bytes:
    """A new resolvable private address for `irk`: `prand` with top bits 01 and random bits that
    are neither all zeros nor all ones, then `ah(irk, prand)`."""
    while True:
        prand = bytearray(secrets.token_bytes(3))
        prand[0] = prand[0] & 0x3F | 0x40
        random_part = ((prand[0] & 0x3F) << 16) | (prand[1] << 8) | prand[2]
        if random_part not in (0, (1 << 22) - 1):
            return bytes(prand) + ah(irk, bytes(prand))


def resolves(address: bytes, irk: bytes) -> bool:
    """Whether `address` (MSB first) was made with `irk`."""
    return address[0] >> 6 == 0b01 and ah(irk, address[:3]) == address[3:]
