#!/usr/bin/env python3
"""Independent BLE peer for testing our HCI host stack (see README.md next to this file).

Two bumble virtual controllers share one LocalLink. Controller A is what the host under
test drives, as an H4 byte stream on a TCP server (and optionally a pty). Controller B runs
a bumble Device acting as the peripheral of the chosen profile. With --vhci, one more
controller A becomes the kernel's own hciN through /dev/vhci (for tests of the `hci:` user
channel in a VM with a real kernel), and with --kernel-vhci N, N more that the kernel itself
manages (BlueZ's tools on the same link). A second TCP port takes JSON control commands. Once
everything is up, exactly one line goes to stdout:

    READY tcp=127.0.0.1:PORT address=AA:BB:CC:DD:EE:FF[/random] control=127.0.0.1:PORT [pty=/dev/pts/N] [vhci=hciN] [kernel=hciM/ADDRESS …]

The peer runs until its stdin closes, SIGTERM/SIGINT, or the control command "quit".
"""
from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peerkit.control import ControlServer  # noqa: E402
from peerkit.hostside import HostPort, PtyHost, TcpHostServer, VhciHost  # noqa: E402
from peerkit.link import ConnectionAddressedLink  # noqa: E402
from peerkit.pairing import IO_CAPABILITIES, PairingFault, PairingOptions, parse_passkey  # noqa: E402
from peerkit.peripheral import Peripheral  # noqa: E402
from peerkit.profiles import PROFILES  # noqa: E402

HOST_ADDRESS_TCP = "A0:A0:A0:00:00:01"
HOST_ADDRESS_PTY = "A0:A0:A0:00:00:02"
HOST_ADDRESS_VHCI = "A0:A0:A0:00:00:03"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="H4 TCP port for controller A (0: pick a free one)")
    parser.add_argument("--control-port", type=int, default=0, help="JSON control port (0: pick a free one)")
    parser.add_argument("--pty", action="store_true", help="also expose a controller A on a pty (uart:)")
    parser.add_argument("--vhci", nargs="?", const="/dev/vhci", metavar="PATH",
                        help="also make a controller A the kernel's hciN through /dev/vhci (module hci_vhci; "
                             "READY waits until the kernel has set it up)")
    parser.add_argument("--kernel-vhci", type=int, default=0, choices=range(0, 10), metavar="N",
                        help="with --vhci: N more controllers on the link through /dev/vhci, left to the kernel "
                             "to manage (public addresses A0:A0:A0:00:00:1k), for BlueZ's tools as a peer")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="generic",
                        help="what the peripheral is; secure: generic plus characteristics that need an "
                             "encrypted / an authenticated Secure Connections link")
    parser.add_argument("--deviation", action="append", default=[], metavar="NAME",
                        help="mirror: depart from the profile on purpose (repeatable): no-service-uuid, wrong-property, "
                             "out-of-range, wrong-error-code, advertises-while-connected, notifies-unsubscribed, honours-write-command, "
                             "wrong-length-code, confirms-unaligned, skips-step-off, short-result, "
                             "progress-outside-scan, stale-after-disconnect")
    parser.add_argument("--address", default=None,
                        help="peripheral address (default B0:B0:B0:00:00:01, or C2:B0:B0:00:00:01 with --random)")
    parser.add_argument("--random", action="store_true", help="advertise with a static random address")
    parser.add_argument("--extended", action="store_true",
                        help="advertise with extended advertising (longer data) instead of legacy")
    parser.add_argument("--legacy-reports", action="store_true",
                        help="clear controller A's extended-advertising feature bits so scanning yields "
                             "LE Advertising Report (0x02) instead of LE Extended Advertising Report (0x0D)")
    parser.add_argument("--adv-interval-ms", type=float, default=100.0)
    parser.add_argument("--speed", type=float, default=10.0,
                        help="simulated devices (mirror, scales) run this many times faster than life")
    parser.add_argument("--host-address", default=HOST_ADDRESS_TCP,
                        help="public address of controller A on TCP (what HCI_Read_BD_ADDR returns)")
    parser.add_argument("--btsnoop", metavar="FILE",
                        help="write controller A's (TCP) H4 traffic as btsnoop (bumble-show --format snoop FILE)")
    pairing = parser.add_argument_group(
        "pairing", "the peripheral's Security Manager (bumble's, with its stock defects fixed; README.md, "
        "\"Pairing\"); all of these can be changed later with the `pairing` control command")
    pairing.add_argument("--io", choices=sorted(IO_CAPABILITIES), default="none",
                         help="IO capability (hwprobe's words or the specification's; default none)")
    pairing.add_argument("--sc", choices=("only", "allowed", "off"), default="allowed",
                         help="Secure Connections: only (SC Only mode), allowed (preferred, legacy accepted), "
                              "off (legacy pairing only)")
    pairing.add_argument("--sc-only", dest="sc", action="store_const", const="only", help="same as --sc only")
    pairing.add_argument("--legacy", dest="sc", action="store_const", const="off", help="same as --sc off")
    pairing.add_argument("--no-bonding", dest="bonding", action="store_false",
                         help="do not ask to bond (no keys distributed, nothing kept)")
    pairing.add_argument("--mitm", action="store_true",
                         help="require MITM protection: Just Works is refused (Authentication Requirements)")
    pairing.add_argument("--passkey", type=parse_passkey, metavar="N",
                         help="the passkey to display and to enter (000000 to 999999; default: a random one "
                              "displayed, and entering waits for the `passkey` command)")
    pairing.add_argument("--compare", choices=("yes", "no", "ask"), default="yes",
                         help="the numeric comparison's answer (ask: wait for the `compare` command)")
    pairing.add_argument("--max-key-size", type=int, default=16, metavar="N", help="7 to 16 octets")
    pairing.add_argument("--min-key-size", type=int, default=7, metavar="N",
                         help="refuse a smaller negotiated key (Encryption Key Size); SC Only mode needs 16")
    pairing.add_argument("--smp-timeout", type=float, default=30.0, metavar="S",
                         help="the SMP timeout (Core Vol 3 Part H 3.4: 30 s)")
    pairing.add_argument("--security-request", action="store_true",
                         help="send a Security Request as soon as a central connects")
    pairing.add_argument("--reveal-keys", action="store_true",
                         help="put key values in events, bonds and state (never otherwise)")
    pairing.add_argument("--irk", type=bytes.fromhex, metavar="HEX",
                         help="our IRK, 16 octets in hex (default: a random non-zero one)")
    pairing.add_argument("--pairing-fault", action="append", default=[], metavar="KIND[@STAGE][#N][:REASON]",
                         type=PairingFault.parse_text,
                         help="a one-shot fault (repeatable): silent, drop-link, off-curve-key, wrong-confirm, "
                              "wrong-dhkey-check, refuse; at pairing_response, public_key, confirm, random, "
                              "dhkey_check or keys (the Nth PDU of that kind we send)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log to stderr (-vv: bumble debug)")
    return parser.parse_args(argv)


def pairing_options(args) -> PairingOptions:
    return PairingOptions(io=args.io, sc=args.sc, bonding=args.bonding, mitm=args.mitm, passkey=args.passkey,
                          compare=args.compare, max_key_size=args.max_key_size, min_key_size=args.min_key_size,
                          smp_timeout=args.smp_timeout, reveal_keys=args.reveal_keys,
                          security_request=args.security_request, irk=args.irk)


async def run(args) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    link = ConnectionAddressedLink()
    factory = PROFILES[args.profile]
    parameters = inspect.signature(factory).parameters
    options = {"speed": args.speed} if "speed" in parameters else {}
    if args.deviation:
        if "deviations" not in parameters:
            raise SystemExit(f"--deviation is for the mirror profile, not {args.profile}")
        options["deviations"] = tuple(args.deviation)
    profile = factory(**options)
    address = args.address or ("C2:B0:B0:00:00:01" if args.random else "B0:B0:B0:00:00:01")
    try:
        options = pairing_options(args)
    except ValueError as error:
        raise SystemExit(f"ble_peer.py: {error}")
    peripheral = Peripheral(link, profile, address, random=args.random,
                            extended=args.extended, interval_ms=args.adv_interval_ms, pairing=options)
    for fault in args.pairing_fault:
        peripheral.pairing.add_fault(fault)
    await peripheral.start()

    ports = {"tcp": HostPort("A-tcp", link, args.host_address, args.legacy_reports)}
    snoop_file = None
    if args.btsnoop:
        from bumble.snoop import BtSnooper
        snoop_file = open(args.btsnoop, "wb")
        ports["tcp"].snooper = BtSnooper(snoop_file)
    tcp = TcpHostServer(ports["tcp"])
    tcp_port = await tcp.start("127.0.0.1", args.port)
    pty = None
    if args.pty:
        ports["pty"] = HostPort("A-pty", link, HOST_ADDRESS_PTY, args.legacy_reports)
        pty = PtyHost(ports["pty"])

    vhci = None
    vhci_index = None
    kernel_vhcis, kernel_indexes = [], []
    if args.vhci:
        ports["vhci"] = HostPort("A-vhci", link, HOST_ADDRESS_VHCI, args.legacy_reports)
        vhci = VhciHost(ports["vhci"], args.vhci)
        # opened in order, so they become hciN, hciN+1, …; the kernel sets them up side by side
        kernel_vhcis = [VhciHost(HostPort(f"K{k}-vhci", link, f"A0:A0:A0:00:00:1{k}", args.legacy_reports), args.vhci)
                        for k in range(args.kernel_vhci)]
        vhci_index, *kernel_indexes = await asyncio.gather(
            *(host.wait_until_set_up(timeout=30.0) for host in [vhci] + kernel_vhcis))

    control = ControlServer(peripheral, ports, on_quit=stop.set)
    control_port = await control.start("127.0.0.1", args.control_port)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    # stdin closing (the test harness went away) stops the peer too
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
        pass  # stdin is not pollable (e.g. a regular file): rely on signals

    line = (f"READY tcp=127.0.0.1:{tcp_port} address={peripheral.address_text()} "
            f"control=127.0.0.1:{control_port}")
    if pty is not None:
        line += f" pty={pty.path}"
    if vhci_index is not None:
        line += f" vhci=hci{vhci_index}"
    for index, host in zip(kernel_indexes, kernel_vhcis):
        line += f" kernel=hci{index}/{host.port.public_address.to_string(False)}"
    print(line, flush=True)

    await stop.wait()
    control.close()
    tcp.close()  # drops a connected host: the peripheral sees the link go
    if pty is not None:
        pty.close()
    if vhci is not None:
        vhci.close()
    for host in kernel_vhcis:
        host.close()
    await asyncio.sleep(0.05)
    await peripheral.aclose()
    if snoop_file is not None:
        snoop_file.close()
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    level = logging.WARNING if args.verbose == 0 else logging.INFO if args.verbose == 1 else logging.DEBUG
    logging.basicConfig(stream=sys.stderr, level=level,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.verbose < 2:
        logging.getLogger("bumble").setLevel(logging.ERROR if args.verbose == 0 else logging.WARNING)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
