"""peerkit.privacy against the specification's `ah` sample (Core Vol 3 Part H Appendix D.7)."""
from peerkit.privacy import ah, make_rpa, resolves

IRK = bytes.fromhex("ec0234a357c8ad05341010a60a397d9b")


def test_ah_matches_the_specification_sample():
    assert ah(IRK, bytes.fromhex("708194")) == bytes.fromhex("0dfbaa")


def test_made_addresses_resolve_with_their_irk_only():
    other = bytes(15) + b"\x01"
    for _ in range(20):
        address = make_rpa(IRK)
        assert address[0] >> 6 == 0b01
        assert resolves(address, IRK)
        assert not resolves(address, other)
