#!/usr/bin/python3
"""A wired Xbox 360 pad (045e:028e) made with the kernel's USB gadget stack, for the bench VM's
usb group: a configfs gadget with one FunctionFS function, bound to a UDC (dummy_hcd's), so the
same kernel's USB host side enumerates it like the real pad and libusb can claim it.

    ffs_xbox360_pad.py LOG [--arm PATH [--signal PATH]] [--name NAME]

What the host sees is the real pad's device descriptor (class ff/ff/ff, bcdDevice 0114,
"©Microsoft Corporation" / "Controller") and its interface 0: class ff/5d/01 with an interrupt IN
endpoint 0x81 and an interrupt OUT endpoint 0x02, 32-byte packets (as in
Tests/Fixtures/umockdev/xbox360-wired-pad.umockdev; the pad's other interfaces, headset and
security, are left out). Every OUT transfer is one JSON line in LOG, in order of arrival:

    {"op": "report", "hex": "00 08 00 ff ff 00 00 00"}
    {"op": "event", "event": "ENABLE"}            (FunctionFS ep0 events: BIND, ENABLE, DISABLE, UNBIND…)
    {"op": "gone", "error": "…"}                  (the OUT endpoint failed: unbound, unplugged)

With --arm PATH, the first report that finds that file (which it then removes) is the last one:
the gadget unbinds itself from the UDC at once, as if the cable were pulled mid-cue, logs
{"op": "unplugged", "after": N} and writes "UNPLUGGED\\n" to --signal PATH (a fifo the caller
holds open, or a file). It acts itself because a caller reacting to a signal is too slow under
TCG: a shell in the bench VM took longer than the whole 400 ms `error` cue to answer.
Once bound it prints `READY gadget=CONFIGFS-DIR udc=NAME` on stdout (flushed). It runs until
SIGTERM/SIGINT and then takes the gadget down again. Only the standard library; the FunctionFS
formats are written out below from <linux/usb/functionfs.h>.
"""
import errno
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time

CONFIGFS = "/sys/kernel/config/usb_gadget"

FUNCTIONFS_DESCRIPTORS_MAGIC_V2 = 3
FUNCTIONFS_STRINGS_MAGIC = 2
FUNCTIONFS_HAS_FS_DESC, FUNCTIONFS_HAS_HS_DESC = 1, 2
EVENTS = ["BIND", "UNBIND", "ENABLE", "DISABLE", "SETUP", "SUSPEND", "RESUME"]


def interface(number, cls, subclass, protocol, endpoints):
    return struct.pack("<BBBBBBBBB", 9, 4, number, 0, endpoints, cls, subclass, protocol, 0)


def endpoint(address, max_packet, interval):
    return struct.pack("<BBBBHB", 7, 5, address, 0x03, max_packet, interval)   # 0x03: interrupt


def descriptors():
    # Full speed as the real pad (speed 12): bInterval in frames, IN every 4 ms, OUT every 8 ms.
    # High speed (if the UDC runs at it): bInterval 2^(n-1) microframes, the same periods.
    fs = [interface(0, 0xFF, 0x5D, 0x01, 2), endpoint(0x81, 32, 4), endpoint(0x02, 32, 8)]
    hs = [interface(0, 0xFF, 0x5D, 0x01, 2), endpoint(0x81, 32, 6), endpoint(0x02, 32, 7)]
    body = struct.pack("<II", len(fs), len(hs)) + b"".join(fs) + b"".join(hs)
    head = struct.pack("<III", FUNCTIONFS_DESCRIPTORS_MAGIC_V2, 12 + len(body), FUNCTIONFS_HAS_FS_DESC | FUNCTIONFS_HAS_HS_DESC)
    strings = struct.pack("<IIII", FUNCTIONFS_STRINGS_MAGIC, 16, 0, 0)
    return head + body, strings


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


class Pad:
    def __init__(self, log_path, signal_path, arm_path, name):
        self.log = open(log_path, "a", buffering=1)
        self.lock = threading.Lock()
        self.signal_path = signal_path
        self.arm_path = arm_path
        self.name = name
        self.gadget = f"{CONFIGFS}/{name}"
        self.mount = f"/run/ffs-{name}"
        self.reports = 0
        self.ep0 = self.ep_out = None
        self.udc = None

    def record(self, **entry):
        with self.lock:
            self.log.write(json.dumps(entry) + "\n")

    def build(self):
        g = self.gadget
        # configfs is a module in Debian's kernel, loaded with libcomposite: mount it if nobody has.
        if not os.path.isdir(CONFIGFS):
            subprocess.run(["mount", "-t", "configfs", "configfs", "/sys/kernel/config"], check=False)
        os.makedirs(g)
        for attribute, value in [("idVendor", "0x045e"), ("idProduct", "0x028e"), ("bcdDevice", "0x0114"),
                                 ("bcdUSB", "0x0200"), ("bDeviceClass", "0xff"), ("bDeviceSubClass", "0xff"),
                                 ("bDeviceProtocol", "0xff")]:
            write(f"{g}/{attribute}", value)
        os.makedirs(f"{g}/strings/0x409")
        write(f"{g}/strings/0x409/manufacturer", "\u00a9Microsoft Corporation")
        write(f"{g}/strings/0x409/product", "Controller")
        write(f"{g}/strings/0x409/serialnumber", "0B5C2E1")
        os.makedirs(f"{g}/configs/c.1")
        write(f"{g}/configs/c.1/MaxPower", "500")
        write(f"{g}/configs/c.1/bmAttributes", "0xa0")
        os.makedirs(f"{g}/functions/ffs.{self.name}")
        os.symlink(f"{g}/functions/ffs.{self.name}", f"{g}/configs/c.1/ffs.{self.name}")
        os.makedirs(self.mount, exist_ok=True)
        subprocess.run(["mount", "-t", "functionfs", self.name, self.mount], check=True)
        self.ep0 = os.open(f"{self.mount}/ep0", os.O_RDWR)
        descs, strings = descriptors()
        os.write(self.ep0, descs)
        os.write(self.ep0, strings)
        # ep1 and ep2 appear in descriptor order: IN, then OUT
        self.ep_out = os.open(f"{self.mount}/ep2", os.O_RDWR)
        udcs = sorted(os.listdir("/sys/class/udc"))
        if not udcs:
            raise SystemExit("ffs_xbox360_pad.py: no UDC in /sys/class/udc (load dummy_hcd)")
        self.udc = udcs[0]
        write(f"{g}/UDC", self.udc)

    def events(self):
        while True:
            try:
                data = os.read(self.ep0, 12 * 4)
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                return
            if not data:
                return
            for offset in range(0, len(data) - 11, 12):
                setup = data[offset:offset + 8]
                kind = data[offset + 8]
                self.record(op="event", event=EVENTS[kind] if kind < len(EVENTS) else str(kind),
                            **({"setup": setup.hex(" ")} if kind == 4 else {}))
                if kind == 4:
                    # A class or vendor request to the interface: the pad answers none of them (stall:
                    # the opposite direction's operation on ep0).
                    try:
                        if setup[0] & 0x80:
                            os.read(self.ep0, 0)
                        else:
                            os.write(self.ep0, b"")
                    except OSError:
                        pass

    def reports_loop(self):
        while True:
            try:
                data = os.read(self.ep_out, 64)
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                self.record(op="gone", error=os.strerror(e.errno))
                return
            self.record(op="report", hex=data.hex(" "))
            self.reports += 1
            if self.arm_path and os.path.exists(self.arm_path):
                # Armed: this report is the last one. Pull the plug at once (the host's next report
                # is already on its way), then tell the caller.
                os.unlink(self.arm_path)
                write(f"{self.gadget}/UDC", "\n")
                self.record(op="unplugged", after=self.reports)
                if self.signal_path:
                    fd = os.open(self.signal_path, os.O_WRONLY | os.O_NONBLOCK | (0 if os.path.exists(self.signal_path) else os.O_CREAT), 0o644)
                    os.write(fd, b"UNPLUGGED\n")
                    os.close(fd)

    def take_down(self):
        g = self.gadget
        steps = [lambda: write(f"{g}/UDC", "\n"), lambda: self.ep_out is not None and os.close(self.ep_out),
                 lambda: self.ep0 is not None and os.close(self.ep0),
                 lambda: subprocess.run(["umount", self.mount], check=False),
                 lambda: os.unlink(f"{g}/configs/c.1/ffs.{self.name}"),
                 lambda: os.rmdir(f"{g}/configs/c.1"), lambda: os.rmdir(f"{g}/functions/ffs.{self.name}"),
                 lambda: os.rmdir(f"{g}/strings/0x409"), lambda: os.rmdir(g)]
        for step in steps:
            try:
                step()
            except OSError:
                pass


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    signal_path, arm_path, name = None, None, "x360pad"
    i = 1
    while i < len(args):
        if args[i] == "--signal":
            signal_path = args[i + 1]; i += 2
        elif args[i] == "--arm":
            arm_path = args[i + 1]; i += 2
        elif args[i] == "--name":
            name = args[i + 1]; i += 2
        else:
            sys.exit(f"ffs_xbox360_pad.py: unknown option {args[i]}")
    pad = Pad(args[0], signal_path, arm_path, name)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        pad.build()
    except BaseException:
        pad.take_down()
        raise
    threading.Thread(target=pad.events, daemon=True).start()
    threading.Thread(target=pad.reports_loop, daemon=True).start()
    print(f"READY gadget={pad.gadget} udc={pad.udc}", flush=True)
    while not stop.wait(1):
        pass
    pad.take_down()


if __name__ == "__main__":
    main()
