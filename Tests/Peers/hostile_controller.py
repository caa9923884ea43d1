#!/usr/bin/env python3
"""A hostile HCI controller on TCP (H4), for the host's bounds (issue 14). Standard library only.

It answers the init sequence any host sends (Command Complete for every command, with sensible
return parameters for the reads), then misbehaves as --mode says:

  flood-adv         once scanning is switched on, LE Advertising Report events as fast as the
                    socket takes them (the host must push back, not buffer them all)
  overlap-services  accepts LE Create Connection at once, then answers every Read By Group Type
                    Request with a service that overlaps the one before, for ever (the host must
                    end discovery with a protocol error)

Prints "READY tcp=127.0.0.1:PORT" once listening; on exit (the host closes) prints
"SENT bytes=N reports=N" so a test can see how hard it pushed.
"""

import argparse
import socket
import struct
import sys

PEER = bytes.fromhex("2A4F00EEFFC0")  # C0:FF:EE:00:4F:2A, little-endian


def event(code: int, params: bytes) -> bytes:
    return bytes([0x04, code, len(params)]) + params


def command_complete(opcode: int, rp: bytes) -> bytes:
    return event(0x0E, bytes([1]) + struct.pack("<H", opcode) + rp)


def return_parameters(opcode: int) -> bytes:
    if opcode == 0x1001:  # Read Local Version Information
        return bytes([0, 0x0C]) + struct.pack("<H", 0) + bytes([0x0C]) + struct.pack("<HH", 0xFFFF, 0)
    if opcode == 0x1003:  # Read Local Supported Features
        return bytes([0]) + bytes(8)
    if opcode == 0x1005:  # Read Buffer Size: none apart from the LE one
        return bytes([0]) + bytes(7)
    if opcode == 0x2002:  # LE Read Buffer Size
        return bytes([0]) + struct.pack("<HB", 251, 8)
    if opcode == 0x1009:  # Read BD_ADDR
        return bytes([0]) + bytes.fromhex("010000ADDE00")
    return bytes([0])


def advertising_report(n: int) -> bytes:
    address = struct.pack("<I", n & 0xFFFFFFFF) + b"\x00\xC0"
    data = bytes([2, 1, 6, 9, 9]) + b"Flood%03d" % (n % 1000)
    report = bytes([1, 0x00, 0x01]) + address + bytes([len(data)]) + data + bytes([0xC4])
    return event(0x3E, bytes([0x02]) + report)


def acl(handle: int, channel: int, payload: bytes) -> bytes:
    pdu = struct.pack("<HH", len(payload), channel) + payload
    return bytes([0x02]) + struct.pack("<HH", handle, len(pdu)) + pdu


class Frames:
    """H4 packets from the host, reassembled from the byte stream."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data: bytes):
        self.buffer += data
        packets = []
        while self.buffer:
            kind = self.buffer[0]
            if kind == 0x01 and len(self.buffer) >= 4:
                length = 4 + self.buffer[3]
            elif kind == 0x02 and len(self.buffer) >= 5:
                length = 5 + struct.unpack_from("<H", self.buffer, 3)[0]
            else:
                break
            if len(self.buffer) < length:
                break
            packets.append(self.buffer[:length])
            self.buffer = self.buffer[length:]
        return packets


def serve(connection: socket.socket, mode: str):
    frames = Frames()
    sent = 0
    reports = 0
    scanning = False
    next_start = 1
    pending = b""  # what a short send left of the last burst: packets must go out whole
    try:
        while True:
            if scanning and mode == "flood-adv":
                # Flood while the host keeps the connection, answering commands between bursts.
                connection.setblocking(False)
                if not pending:
                    pending = b"".join(advertising_report(reports + i) for i in range(64))
                    reports += 64
                try:
                    n = connection.send(pending)
                    sent += n
                    pending = pending[n:]
                except BlockingIOError:
                    pass
                try:
                    data = connection.recv(4096)
                    if not data:
                        return sent, reports
                except BlockingIOError:
                    continue
                finally:
                    connection.setblocking(True)
            else:
                data = connection.recv(4096)
                if not data:
                    return sent, reports
            for packet in frames.feed(data):
                if packet[0] == 0x01:
                    opcode = struct.unpack_from("<H", packet, 1)[0]
                    params = packet[4:]
                    answer = command_complete(opcode, return_parameters(opcode))
                    if opcode == 0x200C:  # LE Set Scan Enable
                        scanning = params[:1] == b"\x01"
                    if opcode == 0x200D and mode == "overlap-services":  # LE Create Connection
                        answer = event(0x0F, bytes([0, 1]) + struct.pack("<H", opcode))
                        answer += event(0x3E, bytes([0x01, 0x00]) + struct.pack("<H", 0x0040) + bytes([0x00, 0x01]) + PEER
                                        + struct.pack("<HHH", 0x0018, 0, 0x01F4) + bytes([0]))
                    if pending:  # finish the burst in flight before answering
                        connection.setblocking(True)
                        connection.sendall(pending)
                        sent += len(pending)
                        pending = b""
                    connection.sendall(answer)
                elif packet[0] == 0x02 and mode == "overlap-services":
                    handle = struct.unpack_from("<H", packet, 1)[0] & 0x0FFF
                    payload = packet[9:]
                    credit = event(0x13, bytes([1]) + struct.pack("<HH", handle, 1))
                    if payload[:1] == b"\x02":  # Exchange MTU Request
                        answer = b"\x03" + struct.pack("<H", 247)
                    elif payload[:1] == b"\x10":  # Read By Group Type Request: overlap the last service
                        start = next_start
                        answer = b"\x11\x06" + struct.pack("<HH", start, start + 0x20) + b"\x0D\x18"
                        next_start = start + 0x10
                    else:
                        answer = b"\x01" + payload[:1] + b"\x00\x00\x06"
                    connection.sendall(credit + acl(handle, 0x0004, answer))
    except (ConnectionResetError, BrokenPipeError):
        return sent, reports


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["flood-adv", "overlap-services"], required=True)
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    print(f"READY tcp=127.0.0.1:{listener.getsockname()[1]}", flush=True)
    connection, _ = listener.accept()
    sent, reports = serve(connection, arguments.mode)
    print(f"SENT bytes={sent} reports={reports}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
