"""Stock bumble 0.0.236 paired with itself, none of peerkit's fixes: the defects the pairing
peers work around are still there. When a bumble release fixes one, this fails and says which
workaround may go (and requirements.txt's pin is what keeps it from changing silently)."""
from __future__ import annotations

import asyncio

from bumble import hci
from bumble.controller import Controller
from bumble.device import Device, DeviceConfiguration
from bumble.host import Host
from bumble.pairing import PairingConfig, PairingDelegate

from pairing_world import world  # noqa: F401  (puts Tests/Peers on sys.path)
from peerkit.link import ConnectionAddressedLink


def stock_device(link, name: str, address: str) -> Device:
    controller = Controller(name, link=link, public_address=hci.Address(address, hci.Address.PUBLIC_DEVICE_ADDRESS))
    config = DeviceConfiguration()
    config.name = name
    config.address = hci.Address("C3:00:00:00:00:0" + name[-1])
    return Device(config=config, host=Host(controller_source=controller, controller_sink=controller))


def test_stock_bumble_still_has_the_defects_worked_around():
    async def body():
        link = ConnectionAddressedLink()
        peripheral = stock_device(link, "P1", "B1:00:00:00:00:01")
        central = stock_device(link, "C2", "C1:00:00:00:00:02")
        await peripheral.power_on()
        await central.power_on()
        # The peripheral asks for MITM but has no IO: stock goes on with Just Works.
        peripheral.pairing_config_factory = lambda connection: PairingConfig(
            sc=True, mitm=True, bonding=True, delegate=PairingDelegate(PairingDelegate.NO_OUTPUT_NO_INPUT))
        await peripheral.start_advertising(own_address_type=hci.OwnAddressType.PUBLIC,
                                           advertising_interval_min=20, advertising_interval_max=20)
        connection = await central.connect(hci.Address("B1:00:00:00:00:01", hci.Address.PUBLIC_DEVICE_ADDRESS),
                                           own_address_type=hci.OwnAddressType.PUBLIC)
        await connection.pair()  # Just Works succeeds although the responder asked for MITM
        assert connection.authenticated is True  # every pairing marked authenticated
        keys = await central.keystore.get(str(connection.peer_address))
        assert keys.irk is not None and keys.irk.value == bytes(16)  # the all-zero IRK
        assert keys.ltk_central is None and keys.ltk is not None  # (SC: one LTK)
    asyncio.run(asyncio.wait_for(body(), 10))


def test_stock_legacy_bond_reconnection_ends_in_a_mic_failure():
    async def body():
        link = ConnectionAddressedLink()
        peripheral = stock_device(link, "P3", "B1:00:00:00:00:03")
        central = stock_device(link, "C4", "C1:00:00:00:00:04")
        for device in (peripheral, central):
            await device.power_on()
            device.pairing_config_factory = lambda connection: PairingConfig(sc=False, mitm=False, bonding=True)
        address = hci.Address("B1:00:00:00:00:03", hci.Address.PUBLIC_DEVICE_ADDRESS)
        await peripheral.start_advertising(own_address_type=hci.OwnAddressType.PUBLIC,
                                           advertising_interval_min=20, advertising_interval_max=20)
        connection = await central.connect(address, own_address_type=hci.OwnAddressType.PUBLIC)
        await connection.pair()
        await connection.disconnect()
        await asyncio.sleep(0.05)
        await peripheral.start_advertising(own_address_type=hci.OwnAddressType.PUBLIC,
                                           advertising_interval_min=20, advertising_interval_max=20)
        connection = await central.connect(address, own_address_type=hci.OwnAddressType.PUBLIC)
        gone = asyncio.get_running_loop().create_future()
        connection.on("disconnection", lambda reason: gone.done() or gone.set_result(reason))
        try:
            await asyncio.wait_for(connection.encrypt(), 2)
        except (Exception, asyncio.CancelledError):  # bumble cancels the wait when the link goes
            pass
        # the peripheral answered with the central's key: the controllers call it a MIC failure
        assert await asyncio.wait_for(gone, 2) == hci.HCI_CONNECTION_TERMINATED_DUE_TO_MIC_FAILURE_ERROR
    asyncio.run(asyncio.wait_for(body(), 10))
