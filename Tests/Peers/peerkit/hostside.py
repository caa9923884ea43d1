"""Controller A: the virtual controller that the host under test drives over H4.

One `HostPort` owns one controller A at a time and one byte stream to the host (a TCP
client, or a pty). It works around two stock bumble 0.0.236 defects:

* `HCI_Reset` resets nothing in bumble's controller (a reset while connected leaves the
  link up). Here a reset retires the controller (the peripheral sees the link drop with
  reason 0x08, like a supervision timeout, and advertises again) and a fresh controller with
  the same address answers the reset.
* A host that goes away mid-connection (TCP client closes) leaves the controller's
  connections, scanning and pending connection behind for the next client. Here the
  controller is power-cycled the same way whenever its TCP client goes away.

It also adds the knobs tests need on this side: mute an HCI opcode (no answer at all, so the
host's command timeout fires) and inject raw bytes into the H4 stream towards the host.
"""
from __future__ import annotations

import asyncio
import errno
import fcntl
import logging
import os
import tty

from bumble import hci, ll
from bumble.controller import Controller
from bumble.snoop import Snooper

from .controller_crypto import CRYPTO_COMMANDS, ControllerCrypto

log = logging.getLogger("peer.hostside")

HCI_RESET_OPCODE = 0x0C03
LINK_LOSS_REASON = 0x08  # what the peripheral sees when controller A vanishes


# ---------------------------------------------------------------------------------------
class H4Splitter:
    """Cuts an H4 byte stream (host -> controller) into whole packets (type byte included).

    A byte that is not a known packet type is dropped (and logged), which is how a
    resynchronising UART controller would behave.
    """

    # type -> (header length after the type byte, offset of length field, size of it)
    HEADERS = {0x01: (3, 2, 1), 0x02: (4, 2, 2), 0x03: (3, 2, 1), 0x04: (2, 1, 1), 0x05: (4, 2, 2)}

    def __init__(self, on_packet):
        self.on_packet = on_packet
        self.buffer = bytearray()

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while self.buffer:
            kind = self.buffer[0]
            header = self.HEADERS.get(kind)
            if header is None:
                log.warning("H4: dropping unknown packet type byte 0x%02X", kind)
                del self.buffer[0]
                continue
            header_len, at, size = header
            if len(self.buffer) < 1 + header_len:
                return
            length = int.from_bytes(self.buffer[1 + at:1 + at + size], "little")
            if kind == 0x05:
                length &= 0x3FFF
            total = 1 + header_len + length
            if len(self.buffer) < total:
                return
            packet = bytes(self.buffer[:total])
            del self.buffer[:total]
            self.on_packet(packet)


# ---------------------------------------------------------------------------------------
class PeerController(ControllerCrypto, Controller):
    """bumble's controller with the fixes this peer needs on the host-facing side (and the
    LE Encrypt / P-256 / DHKey commands stock leaves unanswered: controller_crypto.py)."""

    supported_commands = Controller.supported_commands | CRYPTO_COMMANDS

    def __init__(self, name, link, public_address, legacy_reports: bool):
        super().__init__(name, link=link, public_address=public_address)
        if legacy_reports:
            # Without these bits bumble's controller sends LE Advertising Report (0x02)
            # instead of LE Extended Advertising Report (0x0D) while scanning.
            self.le_features = self.le_features & ~(
                hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
            )

    def on_hci_le_create_connection_cancel_command(self, command):
        # Stock: answers success but keeps the pending connection and never completes it.
        # Spec: Command Complete, then LE Connection Complete with Unknown Connection Id.
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        event = hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
            connection_handle=0,
            role=hci.Role.CENTRAL,
            peer_address_type=pending.peer_address.address_type,
            peer_address=pending.peer_address,
            connection_interval=0,
            peripheral_latency=0,
            supervision_timeout=0,
            central_clock_accuracy=0,
        )
        # after the Command Complete that our caller sends
        asyncio.get_running_loop().call_soon(self.send_hci_packet, event)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)


class _Gate:
    """The packet sink handed to a controller; closed when that controller is retired so
    events it had already scheduled never reach the next host."""

    def __init__(self, port: HostPort):
        self.port = port
        self.open = True

    def on_packet(self, packet: bytes) -> None:
        if self.open:
            self.port.write(packet)


# ---------------------------------------------------------------------------------------
class HostPort:
    """One controller A and the byte stream to the host that drives it."""

    def __init__(self, name: str, link, public_address: str, legacy_reports: bool):
        self.name = name
        self.link = link
        self.public_address = hci.Address(public_address, hci.Address.PUBLIC_DEVICE_ADDRESS)
        self.legacy_reports = legacy_reports
        self.muted: set[int] = set()
        self.writer = None  # callable(bytes) while a host is attached
        self.splitter = H4Splitter(self._on_host_packet)
        self.power_cycles = 0
        self.snooper = None  # a bumble Snooper recording A's H4 traffic (--btsnoop)
        self.controller: PeerController | None = None
        self.gate: _Gate | None = None
        self._new_controller()

    # -- controller lifecycle ------------------------------------------------------------
    def _new_controller(self) -> None:
        self.gate = _Gate(self)
        self.controller = PeerController(self.name, self.link, self.public_address, self.legacy_reports)
        self.controller.host = self.gate

    def _retire_controller(self, reason: int) -> None:
        old, gate = self.controller, self.gate
        if old is None:
            return
        gate.open = False
        old.host = None
        for connection in list(old.le_connections.values()):
            try:
                self.link.send_ll_control_pdu(connection.self_address, connection.peer_address,
                                              ll.TerminateInd(reason))
            except Exception as error:  # the other side may already be gone
                log.debug("terminate on retire: %s", error)
        old.le_connections.clear()
        old.le_legacy_advertiser.stop()
        for advertising_set in old.advertising_sets.values():
            advertising_set.stop()
        old.pending_le_connection = None
        old.le_scan_enable = False
        try:
            self.link.remove_controller(old)
        except KeyError:
            pass
        self.controller = None

    def power_cycle(self, reason: int = LINK_LOSS_REASON) -> None:
        self._retire_controller(reason)
        self._new_controller()
        self.power_cycles += 1
        log.info("%s: controller power-cycled (#%d)", self.name, self.power_cycles)

    # -- host side -----------------------------------------------------------------------
    def attach(self, writer) -> None:
        self.writer = writer
        self.splitter = H4Splitter(self._on_host_packet)

    def detach(self) -> None:
        """The host went away: forget its faults and give the next one a clean controller."""
        self.writer = None
        self.muted.clear()
        self.power_cycle()

    def feed(self, data: bytes) -> None:
        self.splitter.feed(data)

    def write(self, data: bytes) -> None:
        if self.writer is not None:
            if self.snooper is not None:
                self.snooper.snoop(data, Snooper.Direction.CONTROLLER_TO_HOST)
            self.writer(data)

    def inject(self, data: bytes) -> bool:
        if self.writer is None:
            return False
        self.writer(data)
        return True

    def _on_host_packet(self, packet: bytes) -> None:
        if self.snooper is not None:
            self.snooper.snoop(packet, Snooper.Direction.HOST_TO_CONTROLLER)
        if packet[0] == 0x01:
            opcode = int.from_bytes(packet[1:3], "little")
            if opcode in self.muted:
                log.info("%s: muted command 0x%04X dropped", self.name, opcode)
                return
            if opcode == HCI_RESET_OPCODE:
                self.power_cycle()
        try:
            self.controller.on_packet(packet)
        except Exception as error:  # malformed packet: stock bumble answers nothing either
            log.warning("%s: controller rejected packet %s: %s", self.name, packet.hex(), error)


# ---------------------------------------------------------------------------------------
class _TcpHostProtocol(asyncio.Protocol):
    def __init__(self, server: TcpHostServer):
        self.server = server
        self.transport = None

    def connection_made(self, transport):
        previous = self.server.active
        if previous is not None:
            # One host at a time: a new client replaces the old one (a test that closed its
            # socket may not have been noticed yet), which gets a power-cycled controller.
            log.info("tcp: new host replaces the previous one")
            self.server.active = None
            if previous.transport is not None:
                previous.transport.abort()
            self.server.port.detach()
        self.transport = transport
        self.server.active = self
        sock = transport.get_extra_info("socket")
        if sock is not None:
            import socket
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        log.info("tcp: host connected from %s", transport.get_extra_info("peername"))
        self.server.port.attach(transport.write)

    def data_received(self, data):
        if self.server.active is self:
            self.server.port.feed(data)

    def connection_lost(self, exc):
        if self.server.active is self:
            log.info("tcp: host went away")
            self.server.active = None
            self.server.port.detach()


class TcpHostServer:
    def __init__(self, port: HostPort):
        self.port = port
        self.active: _TcpHostProtocol | None = None
        self.server = None

    async def start(self, host: str, tcp_port: int) -> int:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(lambda: _TcpHostProtocol(self), host, tcp_port)
        return self.server.sockets[0].getsockname()[1]

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        if self.active is not None and self.active.transport is not None:
            self.active.transport.abort()


# ---------------------------------------------------------------------------------------
class PtyHost:
    """Controller A reachable through a pseudo-terminal (our `uart:` transport).

    We keep the replica open ourselves, so a host closing it cannot be noticed: a host on
    the pty gets a clean controller by sending HCI_Reset (which it does at start-up).
    """

    MAX_PENDING = 1 << 20

    def __init__(self, port: HostPort):
        self.port = port
        self.primary, self.replica = os.openpty()
        tty.setraw(self.primary)
        tty.setraw(self.replica)
        flags = fcntl.fcntl(self.primary, fcntl.F_GETFL)
        fcntl.fcntl(self.primary, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self.path = os.ttyname(self.replica)
        self.pending = bytearray()
        self.loop = asyncio.get_running_loop()
        self.loop.add_reader(self.primary, self._readable)
        port.attach(self._write)

    def _readable(self):
        try:
            data = os.read(self.primary, 65536)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EIO):
                return
            raise
        if data:
            self.port.feed(data)

    def _write(self, data: bytes) -> None:
        if self.pending:
            self._queue(data)
            return
        try:
            written = os.write(self.primary, data)
        except BlockingIOError:
            written = 0
        if written < len(data):
            self._queue(data[written:])

    def _queue(self, data: bytes) -> None:
        if len(self.pending) + len(data) > self.MAX_PENDING:
            log.warning("pty: nobody reading, dropping %d bytes", len(data))
            return
        if not self.pending:
            self.loop.add_writer(self.primary, self._writable)
        self.pending += data

    def _writable(self):
        try:
            written = os.write(self.primary, self.pending)
        except BlockingIOError:
            return
        del self.pending[:written]
        if not self.pending:
            self.loop.remove_writer(self.primary)

    def close(self):
        self.loop.remove_reader(self.primary)
        if self.pending:
            self.loop.remove_writer(self.primary)
        os.close(self.primary)
        os.close(self.replica)


# ---------------------------------------------------------------------------------------
class VhciHost:
    """Controller A as the kernel's own controller, through /dev/vhci (module hci_vhci).

    Opening /dev/vhci and writing the vendor packet `FF 00` makes the kernel register a new
    primary controller (hciN) whose driver is this process: the kernel's HCI commands arrive
    here as H4 packets, one per read, and every write must be one whole H4 packet. The kernel
    answers the creation with `FF 00 <index, u16 little-endian>`.

    Once registered, the kernel runs its own set-up on the controller (HCI_Reset, reads, …)
    and, with no bluetoothd around, powers it off again 2 s later. Until then, binding the
    user channel fails with EBUSY. `wait_until_set_up` waits for that power-off: the kernel
    has sent commands, and HCIGETDEVINFO no longer shows the transport running. (It cannot
    wait for HCI_UP: the kernel hides UP while the auto-off is pending.)
    """

    HCI_VENDOR_PKT = 0xFF
    HCI_PRIMARY = 0x00
    # HCIGETDEVINFO = _IOR('H', 211, int); struct hci_dev_info is 92 bytes, flags (u32) at 16
    HCIGETDEVINFO = 0x800448D3
    HCI_INIT = 1 << 1
    HCI_RUNNING = 1 << 2
    AF_BLUETOOTH, BTPROTO_HCI = 31, 1  # numbers: a pyenv Python may lack socket.AF_BLUETOOTH

    def __init__(self, port: HostPort, path: str = "/dev/vhci"):
        self.port = port
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self.loop = asyncio.get_running_loop()
        self.index: asyncio.Future[int] = self.loop.create_future()
        self.packets_from_kernel = 0
        self.loop.add_reader(self.fd, self._readable)
        port.attach(self._write)
        os.write(self.fd, bytes([self.HCI_VENDOR_PKT, self.HCI_PRIMARY]))

    def _readable(self):
        try:
            data = os.read(self.fd, 1 + 4 + 65535)
        except BlockingIOError:
            return
        if not data:
            return
        if data[0] == self.HCI_VENDOR_PKT:
            if len(data) >= 4 and not self.index.done():
                self.index.set_result(int.from_bytes(data[2:4], "little"))
            return
        self.packets_from_kernel += 1
        self.port.feed(data)

    def _write(self, data: bytes) -> None:
        try:
            os.write(self.fd, data)
        except OSError as error:  # the kernel dropped the controller (module unloaded)
            log.warning("vhci: write failed: %s", error)

    def flags(self, index: int) -> int:
        import fcntl as _fcntl
        import socket
        import struct
        with socket.socket(self.AF_BLUETOOTH, socket.SOCK_RAW, self.BTPROTO_HCI) as sock:
            request = bytearray(92)
            struct.pack_into("<H", request, 0, index)
            _fcntl.ioctl(sock.fileno(), self.HCIGETDEVINFO, request)
            return struct.unpack_from("<I", request, 16)[0]

    async def wait_until_set_up(self, timeout: float) -> int:
        """The controller's index, once the kernel has set it up and powered it off again."""
        index = await asyncio.wait_for(self.index, timeout)
        deadline = self.loop.time() + timeout
        while self.packets_from_kernel == 0 or self.flags(index) & (self.HCI_RUNNING | self.HCI_INIT):
            if self.loop.time() > deadline:
                raise TimeoutError(f"hci{index}: the kernel did not finish setting it up within {timeout} s "
                                   f"({self.packets_from_kernel} packets from the kernel, "
                                   f"flags 0x{self.flags(index):X})")
            await asyncio.sleep(0.02)
        return index

    def close(self):
        self.loop.remove_reader(self.fd)
        os.close(self.fd)  # the kernel unregisters hciN
