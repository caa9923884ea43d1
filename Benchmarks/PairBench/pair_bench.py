#!/usr/bin/env python3
"""How long a pairing takes: hwprobe against bumble's own Security Manager, side by side, per
method, in the same run (issue 29). Not a test: it prints figures and asserts nothing.

One bumble LocalLink (the fixed one, Tests/Peers/peerkit/link.py) in this process holds the
`secure` pairing peripheral (exactly what `ble_peer.py --profile secure` runs: bumble's Security
Manager with its stock defects fixed), controller A on TCP for `hwprobe pair`, and a bumble
central (`PairingCentral`, the same fixed Security Manager) on controller C. Per method and per
round the peripheral forgets its bonds, then is paired once by each central. Figures:

  exchange      the peripheral's own measure (its `paired` event): from the Pairing Request it
                received to the pairing's end (keys distributed, link encrypted). The same peer
                measures both centrals, so this is the comparable figure.
  bumble call   bumble's `pair()` as its caller waits for it (in this process);
  hwprobe run   `hwprobe pair …` as a user meets it: the whole process, from exec to exit
                (start-up, opening and resetting the controller, connecting, the pairing, writing
                the bond store, disconnecting). The first row times `hwprobe bonds --hci` (start-up,
                opening and resetting the controller, reading the store): what every run pays
                before it connects.

Numeric Comparison is measured for bumble only: unattended, hwprobe refuses it (the contract's
rule), so `hwprobe pair` cannot answer one without a person at a terminal. A reconnection
encrypted with the bond is measured for bumble only (`encrypt()`, LE Enable Encryption to
Encryption Change): no hwprobe command encrypts with a bond on its own yet.

    Benchmarks/PairBench/pair_bench.py --hwprobe .build/release/hwprobe [--rounds 7]

Run it with the peers' venv (`$(scripts/setup-peers)`); `scripts/bench-pair` builds hwprobe in
release and runs it.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Peers"))

from bumble import hci  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.device import Device, DeviceConfiguration  # noqa: E402
from bumble.host import Host  # noqa: E402

from peerkit.hostside import HostPort, TcpHostServer  # noqa: E402
from peerkit.link import ConnectionAddressedLink  # noqa: E402
from peerkit.pairing import PairingOptions  # noqa: E402
from peerkit.pairing_central import PairingCentral  # noqa: E402
from peerkit.peripheral import Peripheral  # noqa: E402
from peerkit.secure_profile import secure  # noqa: E402

PERIPHERAL = "B0:B0:B0:00:00:2B"
PASSKEY = 123456

# name, the peripheral's options, bumble central's options, hwprobe's arguments (None: not run)
METHODS = [
    ("SC Just Works", {"io": "none", "sc": "allowed"}, {"io": "none"}, []),
    ("SC Passkey Entry", {"io": "display", "sc": "only", "mitm": True, "passkey": PASSKEY},
     {"io": "keyboard", "mitm": True, "passkey": PASSKEY}, ["--io", "keyboard", "--passkey", f"{PASSKEY:06d}"]),
    ("SC Numeric Comparison", {"io": "display-yes-no", "sc": "only", "mitm": True},
     {"io": "display-yes-no", "mitm": True}, None),
    ("Legacy Just Works", {"io": "none", "sc": "off"}, {"io": "none", "sc": "off"}, ["--legacy"]),
    ("Legacy Passkey Entry", {"io": "display", "sc": "off", "mitm": True, "passkey": PASSKEY},
     {"io": "keyboard", "sc": "off", "mitm": True, "passkey": PASSKEY},
     ["--legacy", "--io", "keyboard", "--passkey", f"{PASSKEY:06d}"]),
]
DEFAULTS = {"io": "none", "sc": "allowed", "mitm": False, "bonding": True, "passkey": None, "compare": "yes"}


def ms(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{statistics.median(values) * 1000:7.1f} ms" + (f" (±{statistics.pstdev(values) * 1000:.1f})" if len(values) > 1 else "")


async def idle(peripheral: Peripheral, limit: float = 5.0) -> None:
    """Until the peripheral has no link (it advertises again)."""
    deadline = time.monotonic() + limit
    while peripheral.connection is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.005)


async def run_hwprobe(binary: str, tcp: int, arguments: list[str], state: str,
                      command: tuple[str, ...] = ("pair",)) -> tuple[float, int, str]:
    started = time.monotonic()
    target = [PERIPHERAL] if command == ("pair",) else []
    process = await asyncio.create_subprocess_exec(
        binary, *command, "--hci", f"tcp:127.0.0.1:{tcp}", *target, *arguments,
        env={**os.environ, "XDG_STATE_HOME": state}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return time.monotonic() - started, process.returncode, (out + err).decode(errors="replace").strip()


async def main(args) -> int:
    link = ConnectionAddressedLink()
    peripheral = Peripheral(link, secure(), PERIPHERAL, random=False, extended=False, interval_ms=10.0,
                            pairing=PairingOptions())
    await peripheral.start()
    port = HostPort("A0", link, "A0:A0:A0:00:02:01", False)
    server = TcpHostServer(port)
    tcp = await server.start("127.0.0.1", 0)
    controller = Controller("C", link=link, public_address=hci.Address("C0:C0:C0:00:02:01", hci.Address.PUBLIC_DEVICE_ADDRESS))
    config = DeviceConfiguration()
    config.name = "bench-central"
    config.address = hci.Address("C3:C0:C0:00:02:01")
    device = Device(config=config, host=Host(controller_source=controller, controller_sink=controller))
    central = PairingCentral(device, PairingOptions())
    await device.power_on()
    state = tempfile.mkdtemp(prefix="bench-pair-")
    agent = peripheral.pairing
    print(f"pairing against bumble's secure peripheral, {args.rounds} rounds per method, medians (± spread)")
    print(f"{'method':24} {'exchange, bumble':>22} {'exchange, hwprobe':>22} {'bumble call':>20} {'hwprobe run':>20}")
    try:
        # What every hwprobe run pays before it pairs: start-up, opening and resetting the
        # controller, reading the bond store (`hwprobe bonds --hci`, which does just that).
        baseline = []
        for _ in range(args.rounds):
            seconds, code, output = await run_hwprobe(args.hwprobe, tcp, [], state, command=("bonds",))
            if code == 0:
                baseline.append(seconds)
            else:
                print(f"  bonds: exit {code}: {output}", file=sys.stderr)
        print(f"{'(start-up and controller)':24} {'':>22} {'':>22} {'':>20} {ms(baseline):>20}")
        for name, p_options, c_options, h_arguments in METHODS:
            agent.options.update({**DEFAULTS, **p_options})
            central.agent.options.update({**DEFAULTS, **c_options})
            exchange = {"bumble": [], "hwprobe": []}
            bumble_call, hwprobe_run = [], []
            for _ in range(args.rounds):
                agent.bonds.remove(None)
                central.agent.bonds.remove(None)
                await idle(peripheral)
                since = len(agent.events.events)
                await central.connect(PERIPHERAL)
                result = await central.pair()
                await central.disconnect()
                paired = agent.events.named("paired", since)
                if result.get("paired") and paired:
                    bumble_call.append(result["seconds"])
                    exchange["bumble"].append(paired[-1]["seconds"])
                else:
                    print(f"  {name}: bumble did not pair: {result}", file=sys.stderr)
                if h_arguments is None:
                    continue
                agent.bonds.remove(None)
                await idle(peripheral)
                shutil.rmtree(os.path.join(state, "hwprobe"), ignore_errors=True)
                since = len(agent.events.events)
                seconds, code, output = await run_hwprobe(args.hwprobe, tcp, h_arguments, state)
                paired = agent.events.named("paired", since)
                if code == 0 and paired:
                    hwprobe_run.append(seconds)
                    exchange["hwprobe"].append(paired[-1]["seconds"])
                else:
                    print(f"  {name}: hwprobe exit {code}: {output}", file=sys.stderr)
            hw = ms(exchange["hwprobe"]) if h_arguments is not None else "refused unattended"
            print(f"{name:24} {ms(exchange['bumble']):>22} {hw:>22} {ms(bumble_call):>20} {ms(hwprobe_run):>20}")
        # A reconnection encrypted with an SC Just Works bond, no pairing: bumble only, since no
        # hwprobe command encrypts with a bond on its own yet (`gatt` will, with automatic pairing).
        agent.options.update(dict(DEFAULTS))
        central.agent.options.update(dict(DEFAULTS))
        agent.bonds.remove(None)
        central.agent.bonds.remove(None)
        await idle(peripheral)
        await central.connect(PERIPHERAL)
        await central.pair()
        await central.disconnect()
        reconnect = []
        for _ in range(args.rounds):
            await idle(peripheral)
            await central.connect(PERIPHERAL)
            result = await central.encrypt()
            await central.disconnect()
            if result.get("encrypted"):
                reconnect.append(result["seconds"])
        print(f"{'Bond reconnection':24} {'':>22} {'not measured':>22} {ms(reconnect):>20} {'—':>20}")
    finally:
        shutil.rmtree(state, ignore_errors=True)
        server.close()
        await peripheral.aclose()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hwprobe", required=True, help="the hwprobe binary (release)")
    parser.add_argument("--rounds", type=int, default=7)
    parsed = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("bumble").setLevel(logging.CRITICAL)
    sys.exit(asyncio.run(main(parsed)))
