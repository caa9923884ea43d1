"""The bonds a peer keeps for its lifetime (in memory: every peer process starts with none).

One bond per peer identity. What a bond holds follows Core Vol 3 Part H §3.6 (key distribution)
and §2.4.4 (which key encrypts a reconnection):

* Secure Connections: one LTK, derived by both sides (f5), used in both roles with EDIV = 0 and
  Rand = 0.
* Legacy pairing: each side distributes its own LTK with its own EDIV and Rand. A link is
  encrypted with the key distributed by the side that is the *peripheral* on that link: as
  central we encrypt with the peer's key (and its EDIV/Rand); as peripheral we answer an LTK
  Request only when its EDIV/Rand are those of the key we distributed, and then with that key.
  (Stock bumble 0.0.236 answers with the central's key and ignores EDIV/Rand, so a legacy bond's
  reconnection ends in a MIC failure.)

A peer that uses resolvable private addresses is found through its IRK (`ah`, §2.2.2).
"""
from __future__ import annotations

import dataclasses
import hmac

from bumble import crypto, hci

from .gattjson import address_text


def address_key(address: hci.Address) -> tuple[bytes, bool]:
    return (bytes(address), address.is_public)


def address_label(address: hci.Address) -> str:
    return address_text(address) + ("" if address.is_public else "/random")


@dataclasses.dataclass
class DistributedKey:
    """An LTK with the EDIV and Rand that identify it (legacy pairing)."""

    ltk: bytes
    ediv: int
    rand: bytes


@dataclasses.dataclass
class Bond:
    identity: hci.Address
    sc: bool
    authenticated: bool
    key_size: int
    method: str
    ltk: bytes | None = None  # Secure Connections
    ours: DistributedKey | None = None  # legacy: the LTK we distributed
    theirs: DistributedKey | None = None  # legacy: the LTK the peer distributed
    irk: bytes | None = None  # the peer's
    kinds_sent: tuple[str, ...] = ()
    kinds_received: tuple[str, ...] = ()
    seen_as: set = dataclasses.field(default_factory=set)  # addresses the peer connected from

    def key_as_central(self) -> DistributedKey | None:
        """The key, EDIV and Rand to give LE Enable Encryption when we are the central."""
        if self.sc:
            return DistributedKey(self.ltk, 0, bytes(8)) if self.ltk is not None else None
        return self.theirs

    def key_for_request(self, ediv: int, rand: bytes) -> bytes | None:
        """The key answering an LE Long Term Key Request when we are the peripheral, or None
        (a negative reply) when the request's EDIV/Rand name no key of ours."""
        if self.sc:
            if ediv == 0 and rand == bytes(8) and self.ltk is not None:
                return self.ltk
            return None
        if self.ours is None:
            return None
        if ediv == self.ours.ediv and hmac.compare_digest(rand, self.ours.rand):
            return self.ours.ltk
        return None

    def describe(self, reveal: bool) -> dict:
        result = {
            "identity": address_label(self.identity),
            "sc": self.sc,
            "authenticated": self.authenticated,
            "keySize": self.key_size,
            "method": self.method,
            "keysSent": list(self.kinds_sent),
            "keysReceived": list(self.kinds_received),
        }
        if reveal:
            values = {}
            if self.ltk is not None:
                values["ltk"] = self.ltk.hex()
            if self.ours is not None:
                values["ours"] = {"ltk": self.ours.ltk.hex(), "ediv": self.ours.ediv, "rand": self.ours.rand.hex()}
            if self.theirs is not None:
                values["theirs"] = {"ltk": self.theirs.ltk.hex(), "ediv": self.theirs.ediv,
                                    "rand": self.theirs.rand.hex()}
            if self.irk is not None:
                values["irk"] = self.irk.hex()
            result["values"] = values
        return result


class BondStore:
    def __init__(self) -> None:
        self.bonds: dict[tuple[bytes, bool], Bond] = {}

    def store(self, bond: Bond, connected_from: hci.Address) -> None:
        # A new pairing replaces an older bond with the same identity, or from the same address.
        keys = {address_key(bond.identity), address_key(connected_from)}
        self.bonds = {k: b for k, b in self.bonds.items() if k not in keys and not (b.seen_as & keys)}
        bond.seen_as.add(address_key(connected_from))
        self.bonds[address_key(bond.identity)] = bond

    def find(self, address: hci.Address) -> Bond | None:
        key = address_key(address)
        if key in self.bonds:
            return self.bonds[key]
        for bond in self.bonds.values():
            if key in bond.seen_as:
                return bond
        if address.is_resolvable:
            raw = bytes(address)  # little-endian: prand is the three most significant octets
            prand, hash_part = raw[3:6], raw[0:3]
            for bond in self.bonds.values():
                if bond.irk and any(bond.irk) and crypto.ah(bond.irk, prand) == hash_part:
                    return bond
        return None

    def remove(self, address: hci.Address | None) -> int:
        if address is None:
            count = len(self.bonds)
            self.bonds.clear()
            return count
        bond = self.find(address)
        if bond is None:
            return 0
        self.bonds = {k: b for k, b in self.bonds.items() if b is not bond}
        return 1

    def describe(self, reveal: bool) -> list[dict]:
        return [bond.describe(reveal) for bond in self.bonds.values()]
