#!/usr/bin/python3
"""The part of bluetoothd's pairing agent the bench VM's bluez group needs, on the kernel's own
management API (mgmt, HCI_CHANNEL_CONTROL), beside btmgmt.

    mgmt_agent.py INDEX [--confirm yes|no] [--passkey N]

Answers the kernel's User Confirm Requests (the kernel asks user space to confirm even a Just
Works pairing) with --confirm (yes by default) and its User Passkey Requests with --passkey, and
prints one JSON line per pairing event of controller INDEX, flushed, as the kernel reports it:

    {"event": "user-confirm", "address", "value", "hint"}      answered
    {"event": "passkey-request", "address"}                      answered (or refused without --passkey)
    {"event": "passkey-notify", "address", "passkey"}            the kernel displays a passkey
    {"event": "new-ltk", "address", "addressType", "keyType", "authenticated", "central", "encSize", "store"}
    {"event": "new-irk", "address", "identity", "store"}
    {"event": "auth-failed", "address", "status"}
    {"event": "connected" | "disconnected", "address"}

Key values never leave the kernel this way (debugfs has them). Prints READY first; runs until
stdin closes or it is killed. The mgmt layout is the kernel's (doc/mgmt-api.txt in BlueZ).
"""
from __future__ import annotations

import ctypes
import json
import os
import select
import socket
import struct
import sys

AF_BLUETOOTH, BTPROTO_HCI, HCI_CHANNEL_CONTROL, HCI_DEV_NONE = 31, 1, 3, 0xFFFF
USER_CONFIRM_REPLY, USER_CONFIRM_NEG_REPLY = 0x001C, 0x001D
USER_PASSKEY_REPLY, USER_PASSKEY_NEG_REPLY = 0x001E, 0x001F
ADDRESS_TYPES = {0: "bredr", 1: "public", 2: "random"}


def address(data: bytes) -> str:
    return ":".join(f"{b:02X}" for b in reversed(data[:6]))


def main(argv: list[str]) -> int:
    if not argv or not argv[0].isdigit():
        sys.exit(__doc__)
    index = int(argv[0])
    options = dict(zip(argv[1::2], argv[2::2]))
    confirm = options.get("--confirm", "yes") == "yes"
    passkey = int(options["--passkey"]) if "--passkey" in options else None

    sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    libc = ctypes.CDLL(None, use_errno=True)
    bound = struct.pack("<HHH", AF_BLUETOOTH, HCI_DEV_NONE, HCI_CHANNEL_CONTROL)
    if libc.bind(sock.fileno(), bound, len(bound)) != 0:
        sys.exit(f"mgmt_agent: bind the management channel: {os.strerror(ctypes.get_errno())}")

    def send(opcode: int, params: bytes) -> None:
        sock.send(struct.pack("<HHH", opcode, index, len(params)) + params)

    def say(**fields) -> None:
        print(json.dumps(fields), flush=True)

    print("READY", flush=True)
    while True:
        ready, _, _ = select.select([sock, sys.stdin], [], [])
        if sys.stdin in ready and not sys.stdin.buffer.read1(1):
            return 0
        if sock not in ready:
            continue
        packet = sock.recv(4096)
        if len(packet) < 6:
            continue
        event, event_index, length = struct.unpack_from("<HHH", packet)
        p = packet[6:6 + length]
        if event_index != index or len(p) < length:
            continue
        peer = p[:7]  # address and its type, as the replies take them back
        if event == 0x000F and len(p) >= 12:      # User Confirm Request
            value, = struct.unpack_from("<I", p, 8)
            say(event="user-confirm", address=address(p), value=f"{value:06d}", hint=p[7])
            send(USER_CONFIRM_REPLY if confirm else USER_CONFIRM_NEG_REPLY, peer)
        elif event == 0x0010 and len(p) >= 7:     # User Passkey Request
            say(event="passkey-request", address=address(p))
            if passkey is None:
                send(USER_PASSKEY_NEG_REPLY, peer)
            else:
                send(USER_PASSKEY_REPLY, peer + struct.pack("<I", passkey))
        elif event == 0x0017 and len(p) >= 12:    # Passkey Notify
            shown, = struct.unpack_from("<I", p, 7)
            say(event="passkey-notify", address=address(p), passkey=f"{shown:06d}")
        elif event == 0x000A and len(p) >= 37:    # New Long Term Key: store hint, then the key
            key = p[1:]
            say(event="new-ltk", address=address(key), addressType=ADDRESS_TYPES.get(key[6], key[6]),
                keyType=key[7], authenticated=key[7] in (0x01, 0x03), central=key[8], encSize=key[9], store=p[0])
        elif event == 0x0018 and len(p) >= 30:    # New Identity Resolving Key
            say(event="new-irk", address=address(p[1:7]), identity=address(p[7:13]), store=p[0])
        elif event == 0x0011 and len(p) >= 8:     # Authentication Failed
            say(event="auth-failed", address=address(p), status=f"0x{p[7]:02X}")
        elif event == 0x000B and len(p) >= 7:     # Device Connected
            say(event="connected", address=address(p))
        elif event == 0x000C and len(p) >= 7:     # Device Disconnected
            say(event="disconnected", address=address(p))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
