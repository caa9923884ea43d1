#!/usr/bin/python3
"""A Heart Rate-like GATT server on the kernel's own LE ATT channel, for the bench VM's relay
check (kernel-relay.sh): the device behind `hwprobe relay` is a kernel-managed controller, its LE
link, L2CAP and ATT fixed channel (CID 4) the kernel's, as they are for BlueZ's btgatt-server
(which Debian's bluez-test-tools does not ship). This script is only the attribute table's
answers, written from the Core specification (Vol 3 Part F 3.4: the ATT PDUs; Part G 3.1-3.3:
service, characteristic and CCCD declarations) and the Heart Rate Service's assigned numbers.

    att_server.py ADDRESS SECONDS

Binds an L2CAP LE socket to ADDRESS (the kernel controller's public address) on CID 4, prints
READY, then serves one central at a time until SECONDS have passed. Handles:
    0x0001 primary service 180D (Heart Rate)
    0x0002 characteristic: notify, 0x0003, 2A37 (Heart Rate Measurement)
    0x0003 value (flags 00, 72 bpm)      0x0004 CCCD
    0x0005 characteristic: read, 0x0006, 2A38 (Body Sensor Location)
    0x0006 value 01 (chest)
Writing 01 00 to the CCCD sends three notifications of 2A37, 72, 73 and 74 bpm, 0.1 s apart.
Prints one line per event ("connected", "request OPCODE", "subscribed", "notified HEX").
"""
from __future__ import annotations

import ctypes
import select
import socket
import struct
import sys
import time

AF_BLUETOOTH, BTPROTO_L2CAP, ATT_CID, BDADDR_LE_PUBLIC = 31, 0, 4, 1


class SockaddrL2(ctypes.Structure):
    # <bluetooth/l2cap.h> struct sockaddr_l2 (Python 3.11's socket module cannot give a CID)
    _fields_ = [("family", ctypes.c_ushort), ("psm", ctypes.c_ushort), ("bdaddr", ctypes.c_ubyte * 6),
                ("cid", ctypes.c_ushort), ("bdaddr_type", ctypes.c_ubyte)]


def uuid16(value: int) -> bytes:
    return struct.pack("<H", value)


# handle -> (type, value)
TABLE = {
    1: (uuid16(0x2800), uuid16(0x180D)),
    2: (uuid16(0x2803), bytes([0x10]) + struct.pack("<H", 3) + uuid16(0x2A37)),
    3: (uuid16(0x2A37), bytes([0x00, 72])),
    4: (uuid16(0x2902), bytes([0x00, 0x00])),
    5: (uuid16(0x2803), bytes([0x02]) + struct.pack("<H", 6) + uuid16(0x2A38)),
    6: (uuid16(0x2A38), bytes([0x01])),
}
LAST = max(TABLE)
MTU = 23


def error(opcode: int, handle: int, code: int) -> bytes:
    return struct.pack("<BBHB", 0x01, opcode, handle, code)


def in_range(pdu: bytes) -> tuple[int, int, bytes] | None:
    if len(pdu) < 5:
        return None
    start, end = struct.unpack_from("<HH", pdu, 1)
    return start, end, pdu[5:]


def answer(pdu: bytes, cccd: list[int]) -> bytes | None:
    """The response to one PDU (None for commands and confirmations, which get none)."""
    opcode = pdu[0]
    if opcode == 0x02:  # Exchange MTU
        return struct.pack("<BH", 0x03, MTU)
    if opcode in (0x04, 0x08, 0x10):  # Find Information, Read By Type, Read By Group Type
        parsed = in_range(pdu)
        if parsed is None or parsed[0] == 0 or parsed[0] > parsed[1]:
            return error(opcode, parsed[0] if parsed else 0, 0x01)
        start, end, kind = parsed
        handles = [h for h in sorted(TABLE) if start <= h <= end]
        if opcode == 0x04:
            body = b"".join(struct.pack("<H", h) + TABLE[h][0] for h in handles)[: MTU - 2]
            body = body[: len(body) - len(body) % 4]
            return bytes([0x05, 0x01]) + body if body else error(opcode, start, 0x0A)
        matches = [h for h in handles if TABLE[h][0] == kind]
        if opcode == 0x10 and kind != uuid16(0x2800):
            return error(opcode, start, 0x0A if kind == uuid16(0x2801) else 0x10)
        entries = []
        for h in matches:
            value = TABLE[h][1] if h != 4 else bytes(cccd)
            if opcode == 0x10:
                group_end = next((n - 1 for n in sorted(TABLE) if n > h and TABLE[n][0] == uuid16(0x2800)), LAST)
                entries.append(struct.pack("<HH", h, group_end) + value)
            else:
                entries.append(struct.pack("<H", h) + value)
        if not entries:
            return error(opcode, start, 0x0A)
        size = len(entries[0])  # one length per response, as many as fit
        body = b"".join(e for e in entries if len(e) == size)[: ((MTU - 2) // size) * size]
        return bytes([opcode + 1, size]) + body
    if opcode == 0x06:  # Find By Type Value: primary services by UUID
        parsed = in_range(pdu)
        if parsed is None or len(parsed[2]) < 2:
            return error(opcode, 0, 0x04)
        start, end, rest = parsed
        found = [h for h in sorted(TABLE) if start <= h <= end and TABLE[h][0] == rest[:2] == uuid16(0x2800)
                 and TABLE[h][1] == rest[2:]]
        return bytes([0x07]) + struct.pack("<HH", found[0], LAST) if found else error(opcode, start, 0x0A)
    if opcode in (0x0A, 0x0C) and len(pdu) >= 3:  # Read, Read Blob
        handle = struct.unpack_from("<H", pdu, 1)[0]
        if handle not in TABLE:
            return error(opcode, handle, 0x01)
        value = TABLE[handle][1] if handle != 4 else bytes(cccd)
        offset = struct.unpack_from("<H", pdu, 3)[0] if opcode == 0x0C and len(pdu) >= 5 else 0
        return bytes([opcode + 1]) + value[offset: offset + MTU - 1]
    if opcode == 0x12 and len(pdu) >= 3:  # Write
        handle = struct.unpack_from("<H", pdu, 1)[0]
        if handle != 4:
            return error(opcode, handle, 0x03 if handle in TABLE else 0x01)
        if len(pdu) != 5:
            return error(opcode, handle, 0x0D)
        cccd[:] = list(pdu[3:5])
        return bytes([0x13])
    if opcode & 0x40 or opcode == 0x1E:
        return None
    return error(opcode, 0, 0x06)


def serve(connection: socket.socket, deadline: float) -> None:
    cccd = [0, 0]
    pending: list[bytes] = []  # notifications still to send, each 0.1 s after the last
    next_at = 0.0
    while time.monotonic() < deadline:
        wait = max(0.0, min(deadline, next_at if pending else deadline) - time.monotonic())
        ready, _, _ = select.select([connection], [], [], wait)
        if ready:
            try:
                pdu = connection.recv(512)
            except OSError:
                return
            if not pdu:
                return
            print(f"request {pdu[0]:02x} {pdu.hex()}", flush=True)
            subscribed = cccd[0] & 1
            response = answer(pdu, cccd)
            if response is not None:
                connection.send(response)
            if cccd[0] & 1 and not subscribed:
                print("subscribed", flush=True)
                pending = [bytes([0x00, bpm]) for bpm in (72, 73, 74)]
                next_at = time.monotonic() + 0.1
        elif pending and time.monotonic() >= next_at:
            value = pending.pop(0)
            connection.send(bytes([0x1B]) + struct.pack("<H", 3) + value)
            print(f"notified {value.hex()}", flush=True)
            next_at = time.monotonic() + 0.1


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.exit(__doc__)
    address, seconds = argv[0], float(argv[1])
    deadline = time.monotonic() + seconds
    listener = socket.socket(AF_BLUETOOTH, socket.SOCK_SEQPACKET, BTPROTO_L2CAP)
    where = SockaddrL2(AF_BLUETOOTH, 0, (ctypes.c_ubyte * 6)(*bytes.fromhex(address.replace(":", ""))[::-1]),
                       ATT_CID, BDADDR_LE_PUBLIC)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.bind(listener.fileno(), ctypes.byref(where), ctypes.sizeof(where)) != 0:
        sys.exit(f"bind to {address} CID 4: errno {ctypes.get_errno()}")
    listener.listen(1)
    print(f"READY {address}", flush=True)
    while time.monotonic() < deadline:
        ready, _, _ = select.select([listener], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        connection, peer = listener.accept()
        print(f"connected {peer[0]}", flush=True)
        with connection:
            serve(connection, deadline)
        print("disconnected", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
