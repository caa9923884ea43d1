"""The pairing peers against each other, in one process: PairingCentral (bumble's host as the
central, peerkit/pairing_central.py) pairs with the secure-profile peripheral that ble_peer.py
runs, in every method, and each side's events are checked against what the other side did.

Each test builds a fresh radio-free world (two bumble controllers on the fixed LocalLink), so a
pairing takes tens of milliseconds; the SMP timeout is shortened where a test waits for it.
"""
from __future__ import annotations

import asyncio

import pytest

from pairing_world import world
from peerkit.pairing import PairingFault, PairingOptions
from peerkit.secure_profile import (
    AUTHENTICATED_SC_UUID, AUTHENTICATED_SC_VALUE, ENCRYPTED_UUID, ENCRYPTED_VALUE,
)

CONFIRM_VALUE_FAILED = 0x04
PAIRING_NOT_SUPPORTED = 0x05
AUTHENTICATION_REQUIREMENTS = 0x03
ENCRYPTION_KEY_SIZE = 0x06
DHKEY_CHECK_FAILED = 0x0B
NUMERIC_COMPARISON_FAILED = 0x0C


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 20))


def only(events: list[dict]) -> dict:
    assert len(events) == 1, events
    return events[0]


def assert_no_bond(w) -> None:
    assert w.peripheral.pairing.bonds.bonds == {}
    assert w.central.agent.bonds.bonds == {}
    assert w.p_named("bonded") == [] and w.c_named("bonded") == []


# -- every method -------------------------------------------------------------------------
def test_sc_just_works_is_encrypted_but_not_authenticated():
    async def body():
        async with world(PairingOptions(io="none"), PairingOptions(io="none")) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] and result["method"] == "just-works" and result["sc"]
            for events in (w.p_events, w.c_events):
                method = only(events.named("method"))
                assert method["method"] == "just-works" and method["sc"] is True
                paired = only(events.named("paired"))
                # stock bumble reports every pairing, Just Works included, as authenticated
                assert paired["authenticated"] is False and paired["bonded"] is True
                change = only(events.named("encryption_changed"))
                assert change["authenticated"] is False and change["keySize"] == 16 and change["cause"] == "pairing"
            assert w.central.connection.authenticated is False  # bumble's flag put right too
            encrypted = await w.central.read(ENCRYPTED_UUID, auto_secure=False)
            assert encrypted["value"] == ENCRYPTED_VALUE.hex()
            # the authenticated-SC characteristic wants more than Just Works gives
            refused = await w.central.read(AUTHENTICATED_SC_UUID, auto_secure=False)
            assert refused["attError"] == 0x05
    run(body())


@pytest.mark.parametrize("sc", ["allowed", "off"])
def test_passkey_entry_peripheral_displays(sc):
    async def body():
        async with world(PairingOptions(io="display", passkey=654321, mitm=True, sc=sc),
                         PairingOptions(io="keyboard", passkey=654321)) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] and result["method"] == "passkey-entry"
            assert result["sc"] is (sc == "allowed") and result["authenticated"] is True
            assert only(w.p_named("passkey_displayed"))["passkey"] == "654321"
            assert only(w.c_named("passkey_entered"))["passkey"] == "654321"
            assert only(w.p_named("method"))["passkeyDisplayedBy"] == "us"
            assert only(w.c_named("method"))["passkeyDisplayedBy"] == "peer"
            if sc == "off":
                # legacy: each side distributes its own LTK with EDIV and Rand
                sent = [e for e in w.p_named("keys") if e["direction"] == "sent"][0]
                assert sent["kinds"] == ["ltk", "ediv-rand", "irk", "identity-address"]
    run(body())


def test_passkey_entry_central_displays_passkey_000000():
    async def body():
        async with world(PairingOptions(io="keyboard", passkey=0, mitm=True),
                         PairingOptions(io="display", passkey=0)) as w:
            await w.connect()
            result = await w.central.pair()
            # stock bumble stalls on passkey 000000 with Secure Connections
            assert result["paired"] and result["method"] == "passkey-entry" and result["sc"]
            assert only(w.c_named("passkey_displayed"))["passkey"] == "000000"
            assert only(w.p_named("passkey_entered"))["passkey"] == "000000"
            read = await w.central.read(AUTHENTICATED_SC_UUID, auto_secure=False)
            assert read["value"] == AUTHENTICATED_SC_VALUE.hex()
    run(body())


def test_passkey_entry_both_type_and_passkey_given_through_the_control_command():
    async def body():
        async with world(PairingOptions(io="keyboard", mitm=True), PairingOptions(io="keyboard", passkey=111222)) as w:
            await w.connect()
            pairing = asyncio.ensure_future(w.central.pair())
            await w.p_events.wait_for(lambda e: e["event"] == "passkey_requested", timeout=2)
            assert w.peripheral.pairing.enter_passkey(111222) is True
            result = await pairing
            assert result["paired"] and result["method"] == "passkey-entry" and result["authenticated"]
            assert w.p_named("passkey_displayed") == [] and w.c_named("passkey_displayed") == []
    run(body())


def test_numeric_comparison_both_sides_see_the_same_value():
    async def body():
        async with world(PairingOptions(io="display-yes-no", compare="ask"),
                         PairingOptions(io="keyboard-display", compare="yes", mitm=True)) as w:
            await w.connect()
            pairing = asyncio.ensure_future(w.central.pair())
            asked = await w.p_events.wait_for(lambda e: e["event"] == "numeric_comparison_requested", timeout=2)
            w.peripheral.pairing.answer(True)
            result = await pairing
            assert result["paired"] and result["method"] == "numeric-comparison" and result["authenticated"]
            shown = only(w.c_named("numeric_comparison"))
            assert shown["value"] == asked["value"] == only(w.p_named("numeric_comparison"))["value"]
            assert len(shown["value"]) == 6
            read = await w.central.read(AUTHENTICATED_SC_UUID, auto_secure=False)
            assert read["value"] == AUTHENTICATED_SC_VALUE.hex()
    run(body())


def test_legacy_just_works():
    async def body():
        async with world(PairingOptions(sc="off"), PairingOptions()) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] and result["method"] == "just-works" and result["sc"] is False
            assert result["authenticated"] is False
            assert only(w.c_named("method"))["legacy"] is True
    run(body())


# -- bonds and reconnection ----------------------------------------------------------------
@pytest.mark.parametrize("sc", ["allowed", "off"])
def test_bonded_reconnection_encrypts_with_the_stored_key_and_no_pairing(sc):
    async def body():
        async with world(PairingOptions(io="display", passkey=135790, mitm=True, sc=sc, reveal_keys=True),
                         PairingOptions(io="keyboard", passkey=135790, reveal_keys=True)) as w:
            await w.connect()
            assert (await w.central.pair())["paired"]
            bond = only(w.p_named("bonded"))
            assert bond["sc"] is (sc == "allowed") and bond["authenticated"] is True
            mark_p, mark_c = len(w.p_events.events), len(w.c_events.events)
            await w.reconnect()
            # a client that pairs on demand: 0x0F (it holds a bond), encrypt with it, read again
            read = await w.central.read(AUTHENTICATED_SC_UUID if sc == "allowed" else ENCRYPTED_UUID)
            assert read["attErrors"] == [0x0F] and read["secured"]["cause"] == "bond"
            assert "value" in read
            after = w.p_events.since(mark_p)
            names = [e["event"] for e in after]
            assert "pairing_started" not in names and "paired" not in names
            request = only([e for e in after if e["event"] == "ltk_request"])
            assert request["found"] is True and request["cause"] == "bond"
            if sc == "off":
                # the request names our key (random EDIV/Rand, not the zeros that name an SC key)
                assert request["ediv"] != 0 or request["rand"] != "00" * 8
            change = only([e for e in after if e["event"] == "encryption_changed"])
            assert change["pairing"] is False and change["authenticated"] is True
            assert change["sc"] is (sc == "allowed")
            assert w.peripheral.pairing.encryptions_without_pairing == 1
            assert [e["event"] for e in w.c_events.since(mark_c)].count("pairing_started") == 0
    run(body())


def test_legacy_bond_keys_are_each_sides_own():
    async def body():
        async with world(PairingOptions(sc="off", reveal_keys=True), PairingOptions(reveal_keys=True)) as w:
            await w.connect()
            assert (await w.central.pair())["paired"]
            p_bond = w.peripheral.pairing.bonds.describe(True)[0]["values"]
            c_bond = w.central.agent.bonds.describe(True)[0]["values"]
            # the peripheral answers with the key it distributed; the central encrypts with it
            assert p_bond["ours"] == c_bond["theirs"]
            assert c_bond["ours"] == p_bond["theirs"]
            assert p_bond["ours"]["ltk"] != p_bond["theirs"]["ltk"]
    run(body())


def test_no_bonding_keeps_nothing():
    async def body():
        async with world(PairingOptions(), PairingOptions(bonding=False)) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] and result["bonded"] is False
            assert only(w.p_named("paired"))["bonded"] is False
            assert_no_bond(w)
            await w.reconnect()
            # no bond: encryption is not possible, and the server says pairing is needed
            assert (await w.central.encrypt())["encrypted"] is False
            assert (await w.central.read(ENCRYPTED_UUID, auto_secure=False))["attError"] == 0x05
    run(body())


def test_bond_removed_at_the_peripheral_gives_a_negative_reply():
    async def body():
        async with world(PairingOptions(), PairingOptions()) as w:
            await w.connect()
            assert (await w.central.pair())["paired"]
            assert w.peripheral.pairing.bonds.remove(None) == 1
            await w.reconnect()
            result = await w.central.encrypt()
            assert result["encrypted"] is False
            request = w.p_named("ltk_request")[-1]
            assert request["found"] is False and request["bonded"] is False
            assert w.c_named("encryption_failed")[-1]["status"] == 0x06  # PIN or Key Missing
    run(body())


# -- failures ------------------------------------------------------------------------------
@pytest.mark.parametrize("sc", ["allowed", "off"])
def test_wrong_passkey_is_confirm_value_failed_and_nothing_stored(sc):
    async def body():
        async with world(PairingOptions(io="display", passkey=222222, sc=sc, mitm=True),
                         PairingOptions(io="keyboard", passkey=111111)) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] == CONFIRM_VALUE_FAILED
            failed = only(w.c_named("pairing_failed"))
            assert failed["reason"] == CONFIRM_VALUE_FAILED and failed["reasonName"] == "CONFIRM_VALUE_FAILED"
            assert only(w.p_named("pairing_failed"))["reason"] == CONFIRM_VALUE_FAILED
            assert_no_bond(w)
    run(body())


def test_refused_numeric_comparison_is_0x0c():
    async def body():
        async with world(PairingOptions(io="display-yes-no", compare="no"),
                         PairingOptions(io="display-yes-no", mitm=True)) as w:
            await w.connect()
            result = await w.central.pair()
            # stock bumble sends Confirm Value Failed (0x04) for a refused comparison
            assert result["paired"] is False and result["reason"] == NUMERIC_COMPARISON_FAILED
            refusal = only(w.p_named("pairing_failed"))
            assert refusal["reason"] == NUMERIC_COMPARISON_FAILED and refusal["by"] == "us"
            assert only(w.p_named("numeric_comparison"))["accepted"] is False
            assert_no_bond(w)
    run(body())


@pytest.mark.parametrize("faulty", ["central", "peripheral"])
def test_public_key_off_the_curve_is_dhkey_check_failed(faulty):
    async def body():
        fault = [PairingFault.parse({"fault": "off_curve_key"})]
        async with world(peripheral_faults=fault if faulty == "peripheral" else [],
                         central_faults=fault if faulty == "central" else []) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] == DHKEY_CHECK_FAILED
            honest = w.peripheral.events if faulty == "central" else w.central.events
            refusal = only(honest.named("pairing_failed"))
            # stock bumble: an exception, then Unspecified Reason (0x08)
            assert refusal["reason"] == DHKEY_CHECK_FAILED and refusal["by"] == "us"
            faulty_events = w.central.events if faulty == "central" else w.peripheral.events
            assert only(faulty_events.named("fault"))["at"] == "public_key"
            assert_no_bond(w)
    run(body())


def test_wrong_confirm_value_is_confirm_value_failed():
    async def body():
        async with world(peripheral_faults=[PairingFault.parse({"fault": "wrong_confirm"})]) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] == CONFIRM_VALUE_FAILED
            assert only(w.c_named("pairing_failed"))["by"] == "us"
    run(body())


def test_wrong_dhkey_check_is_dhkey_check_failed():
    async def body():
        async with world(central_faults=[PairingFault.parse({"fault": "wrong_dhkey_check"})]) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] == DHKEY_CHECK_FAILED
            assert only(w.p_named("pairing_failed"))["by"] == "us"
    run(body())


def test_silent_peer_runs_into_the_initiators_smp_timeout():
    async def body():
        async with world(PairingOptions(smp_timeout=5.0), PairingOptions(smp_timeout=0.4),
                         peripheral_faults=[PairingFault.parse({"fault": "silent", "at": "confirm"})]) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] is None
            assert result["reasonName"] == "SMP timeout" and 0.35 < result["seconds"] < 2
            failed = only(w.c_named("pairing_failed"))
            assert failed["by"] == "timeout" and failed["reason"] is None
            # nothing more on this link (Vol 3 Part H 3.4): pairing again needs a new link
            again = await w.central.pair()
            assert again["paired"] is False and "reconnect" in again.get("detail", "")
            await w.reconnect()
            assert (await w.central.pair())["paired"] is True
    run(body())


def test_link_dropped_mid_pairing():
    async def body():
        async with world(peripheral_faults=[PairingFault.parse({"fault": "drop_link", "at": "random"})]) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False
            assert w.c_named("disconnected")[-1]["reason"] == 0x08
            assert only(w.p_named("fault"))["fault"] == "drop_link"
            assert_no_bond(w)
    run(body())


def test_refused_pairing():
    async def body():
        async with world(peripheral_faults=[PairingFault.parse({"fault": "refuse"})]) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] == PAIRING_NOT_SUPPORTED
    run(body())


@pytest.mark.parametrize("mitm_side", ["peripheral", "central"])
def test_mitm_required_refuses_just_works_in_either_role(mitm_side):
    async def body():
        async with world(PairingOptions(mitm=mitm_side == "peripheral"),
                         PairingOptions(mitm=mitm_side == "central")) as w:
            await w.connect()
            result = await w.central.pair()
            # stock bumble as responder goes on with Just Works though it asked for MITM
            assert result["paired"] is False and result["reason"] == AUTHENTICATION_REQUIREMENTS
            strict = w.peripheral.events if mitm_side == "peripheral" else w.central.events
            assert only(strict.named("pairing_failed"))["by"] == "us"
            assert_no_bond(w)
    run(body())


def test_secure_connections_only_refuses_legacy():
    async def body():
        async with world(PairingOptions(sc="only"), PairingOptions(sc="off")) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] == AUTHENTICATION_REQUIREMENTS
    run(body())


def test_negotiated_key_size_is_the_smaller_and_applied():
    async def body():
        async with world(PairingOptions(io="display", passkey=1, max_key_size=10, mitm=True),
                         PairingOptions(io="keyboard", passkey=1)) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] and result["keySize"] == 10
            assert only(w.p_named("encryption_changed"))["keySize"] == 10
            # authenticated SC, but not a 16-octet key: Insufficient Encryption Key Size
            assert (await w.central.read(AUTHENTICATED_SC_UUID, auto_secure=False))["attError"] == 0x0C
            await w.reconnect()
            assert (await w.central.encrypt())["keySize"] == 10  # the masked key works again
            assert (await w.central.read(ENCRYPTED_UUID, auto_secure=False))["value"] == ENCRYPTED_VALUE.hex()
    run(body())


def test_minimum_key_size_refused():
    async def body():
        async with world(PairingOptions(min_key_size=16), PairingOptions(max_key_size=12)) as w:
            await w.connect()
            result = await w.central.pair()
            assert result["paired"] is False and result["reason"] == ENCRYPTION_KEY_SIZE
    run(body())


# -- security requests, identity -----------------------------------------------------------
def test_security_request_is_answered_by_pairing_then_by_the_bond():
    async def body():
        async with world(PairingOptions(security_request=True), PairingOptions()) as w:
            await w.connect()
            await w.c_events.wait_for(lambda e: e["event"] == "paired", timeout=2)
            assert only(w.c_named("security_request"))["direction"] == "received"
            mark = len(w.p_events.events)
            await w.reconnect()
            change = await w.p_events.wait_for(lambda e: e["event"] == "encryption_changed", since=mark, timeout=2)
            assert change["cause"] == "bond" and change["pairing"] is False
    run(body())


def test_irks_are_not_zero():
    async def body():
        async with world(PairingOptions(reveal_keys=True), PairingOptions(reveal_keys=True)) as w:
            await w.connect()
            assert (await w.central.pair())["paired"]
            for events in (w.p_events, w.c_events):
                received = [e for e in events.named("keys") if e["direction"] == "received"][0]
                assert "irk" in received["kinds"]
                # stock bumble distributes an all-zero IRK
                assert received["values"]["irk"] != "00" * 16
            # and without reveal_keys no value is ever in an event
    run(body())


def test_key_values_only_when_asked():
    async def body():
        async with world(PairingOptions(sc="off"), PairingOptions()) as w:
            await w.connect()
            assert (await w.central.pair())["paired"]
            for event in w.p_events.events + w.c_events.events:
                assert "values" not in event and "ediv" not in event and "rand" not in event
            assert all("values" not in b for b in w.peripheral.pairing.bonds.describe(False))
    run(body())


def test_options_change_whole_or_not_at_all():
    options = PairingOptions()
    options.update({"io": "keyboard", "smpTimeout": "2.5", "passkey": "000042", "mitm": "yes"})
    assert (options.io, options.smp_timeout, options.passkey, options.mitm) == ("keyboard", 2.5, 42, True)
    with pytest.raises(ValueError):
        options.update({"compare": "no", "io": "telepathy"})
    assert (options.io, options.compare) == ("keyboard", "yes")
