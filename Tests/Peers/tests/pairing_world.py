"""A radio-free pairing world in one process for the self-tests: the secure-profile peripheral
(exactly what ble_peer.py runs as controller B) and a PairingCentral on controller C, on one
fixed LocalLink. Pairings take milliseconds here, so every method fits in seconds."""
from __future__ import annotations

import asyncio
import contextlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bumble import hci  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.device import Device, DeviceConfiguration  # noqa: E402
from bumble.host import Host  # noqa: E402

from peerkit.link import ConnectionAddressedLink  # noqa: E402
from peerkit.pairing import PairingFault, PairingOptions  # noqa: E402
from peerkit.pairing_central import PairingCentral  # noqa: E402
from peerkit.peripheral import Peripheral  # noqa: E402
from peerkit.secure_profile import secure  # noqa: E402

PERIPHERAL_ADDRESS = "B0:B0:B0:00:00:01"
CENTRAL_ADDRESS = "C0:C0:C0:00:00:01"


class World:
    def __init__(self, peripheral: Peripheral, central: PairingCentral):
        self.peripheral = peripheral
        self.central = central

    @property
    def p_events(self):
        return self.peripheral.events

    @property
    def c_events(self):
        return self.central.events

    def p_named(self, name):
        return self.peripheral.events.named(name)

    def c_named(self, name):
        return self.central.events.named(name)

    async def connect(self):
        return await self.central.connect(PERIPHERAL_ADDRESS)

    async def reconnect(self):
        await self.central.disconnect()
        await asyncio.sleep(0.01)
        # the peripheral advertises again after the disconnection
        for _ in range(100):
            if self.peripheral.connection is None:
                break
            await asyncio.sleep(0.01)
        return await self.connect()


@contextlib.asynccontextmanager
async def world(peripheral_options: PairingOptions | None = None, central_options: PairingOptions | None = None,
                peripheral_faults: list[PairingFault] = (), central_faults: list[PairingFault] = ()):
    link = ConnectionAddressedLink()
    peripheral = Peripheral(link, secure(), PERIPHERAL_ADDRESS, random=False, extended=False,
                            interval_ms=10.0, pairing=peripheral_options or PairingOptions())
    for fault in peripheral_faults:
        peripheral.pairing.add_fault(fault)
    await peripheral.start()
    controller = Controller("C", link=link, public_address=hci.Address(CENTRAL_ADDRESS, hci.Address.PUBLIC_DEVICE_ADDRESS))
    config = DeviceConfiguration()
    config.name = "pairing-central"
    config.address = hci.Address("C3:C0:C0:00:00:01")
    device = Device(config=config, host=Host(controller_source=controller, controller_sink=controller))
    central = PairingCentral(device, central_options or PairingOptions())
    for fault in central_faults:
        central.agent.add_fault(fault)
    await device.power_on()
    try:
        yield World(peripheral, central)
    finally:
        await peripheral.aclose()
