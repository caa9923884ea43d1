#!/usr/bin/env python3
"""Several bumble virtual controllers on one LocalLink, each the kernel's own hciN.

For the bench VM's kernel groups (Tests/BenchVM/groups/kernel-gatt.sh): every controller is
registered through /dev/vhci (module hci_vhci), so one can be opened by hwprobe through the
HCI user channel while the kernel manages another one (BlueZ's tools, the kernel's L2CAP, ATT
socket and Security Manager), and the two meet on the air of the shared link. No bumble Device
runs here: both hosts are outside this process; bumble only plays the controllers and the air.

    vhci_link.py [--count N] [--btsnoop PREFIX]

Prints one line once the kernel has set every controller up (and powered it off again):

    READY hci0=A0:A0:A0:00:00:10 hci1=A0:A0:A0:00:00:11

(controller k has the public address A0:A0:A0:00:00:1k). Runs until stdin closes or SIGTERM.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peerkit.hostside import HostPort, VhciHost  # noqa: E402
from peerkit.link import ConnectionAddressedLink  # noqa: E402


async def run(args) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    link = ConnectionAddressedLink()
    hosts = []
    snoop_files = []
    for k in range(args.count):
        port = HostPort(f"K{k}-vhci", link, f"A0:A0:A0:00:00:1{k}", legacy_reports=False)
        if args.btsnoop:
            from bumble.snoop import BtSnooper
            snoop_file = open(f"{args.btsnoop}{k}.btsnoop", "wb")
            snoop_files.append(snoop_file)
            port.snooper = BtSnooper(snoop_file)
        # opened in order, so hciN are numbered in the order of the addresses
        hosts.append((port, VhciHost(port, "/dev/vhci")))
    # the kernel sets them up side by side (each then waits 2 s before powering it off)
    indexes = await asyncio.gather(*(vhci.wait_until_set_up(timeout=30.0) for _, vhci in hosts))
    hosts = [(index, port, vhci) for index, (port, vhci) in zip(indexes, hosts)]

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def stdin_readable():
        try:
            data = os.read(sys.stdin.fileno(), 4096)
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(sys.stdin.fileno())
            stop.set()
    try:
        loop.add_reader(sys.stdin.fileno(), stdin_readable)
    except (ValueError, OSError, PermissionError):
        pass  # stdin is not pollable: rely on signals

    print("READY " + " ".join(f"hci{index}={port.public_address.to_string(False)}" for index, port, _ in hosts),
          flush=True)
    await stop.wait()
    for _, _, vhci in hosts:
        vhci.close()
    for snoop_file in snoop_files:
        snoop_file.close()
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=2, choices=range(1, 10), metavar="N",
                        help="controllers on the link (1-9, default 2)")
    parser.add_argument("--btsnoop", metavar="PREFIX", help="record each controller's HCI traffic to PREFIXk.btsnoop")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log to stderr (-vv: bumble debug)")
    args = parser.parse_args(argv)
    level = logging.WARNING if args.verbose == 0 else logging.INFO if args.verbose == 1 else logging.DEBUG
    logging.basicConfig(stream=sys.stderr, level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.verbose < 2:
        logging.getLogger("bumble").setLevel(logging.ERROR if args.verbose == 0 else logging.WARNING)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
