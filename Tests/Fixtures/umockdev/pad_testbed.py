#!/usr/bin/python3
"""Runs a pad command in a umockdev testbed that can unplug the pad or hold it with a kernel driver.

Usage: umockdev-wrapper /usr/bin/python3 pad_testbed.py DEVICE_FILE
           [--pcap SYSPATH=FILE] [--hidraw DEVNODE=BUS:VID:PID:DESCRIPTOR_HEX_FILE]
           [--xpad DEVNODE=bound|free] -- COMMAND...

The testbed lives in this (preloaded) process, so COMMAND inherits the preload and sees the pad.
--pcap replays a usbmon capture for a libusb device (as umockdev-run -p does); --hidraw answers
HIDIOCGRAWINFO / HIDIOCGRDESCSIZE / HIDIOCGRDESC and accepts output reports like a DualShock 4
on USB, printing each one as `hidraw-write HEX` on stderr. --xpad answers the usbfs ioctls of
claiming an interface that the kernel's xpad driver holds (`bound`) or not: claiming a bound
interface fails with EBUSY, GETDRIVER names xpad, and the DISCONNECT / CONNECT requests unbind
and rebind it; each step is printed on stderr (`usbfs claim`, `xpad detached`, ...).

COMMAND prints `unplug` on its stdout when it wants the pad gone (pad-probe --unplug-after N) and
then waits for a line on its stdin. This script then removes every device from the testbed (as
the kernel would on unplug: sysfs entry and device node gone, a `remove` uevent), makes hidraw
writes fail with ENODEV from then on, and answers with a line. Every other line is passed on.
Exits with COMMAND's exit code.
"""
import errno, os, struct, subprocess, sys, threading
import gi
gi.require_version("UMockdev", "1.0")
from gi.repository import GLib, UMockdev

HIDIOCGRDESCSIZE = 0x80044801
HIDIOCGRDESC = 0x90044802
HIDIOCGRAWINFO = 0x80084803
USBDEVFS_CLAIMINTERFACE = 0x8004550F
USBDEVFS_RELEASEINTERFACE = 0x80045510
USBDEVFS_GETDRIVER = 0x41045508
USBDEVFS_IOCTL = 0xC0105512
USBDEVFS_DISCONNECT = 0x5516
USBDEVFS_CONNECT = 0x5517


def note(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class KernelDriver:
    """usbfs as it looks while xpad is (or is not) bound to interface 0."""

    def __init__(self, bound):
        self.bound = bound

    def ioctl(self, handler, client):
        req = client.get_request()
        arg = client.get_arg()
        if req == USBDEVFS_GETDRIVER:
            data = arg.resolve(0, 260)
            if not self.bound:
                client.complete(-1, errno.ENODATA)
                return True
            data.update(4, b"xpad".ljust(256, b"\0"))
            note("usbfs getdriver")
            client.complete(0, 0)
        elif req == USBDEVFS_CLAIMINTERFACE:
            if self.bound:
                note("usbfs claim refused")
                client.complete(-1, errno.EBUSY)
            else:
                note("usbfs claim")
                client.complete(0, 0)
        elif req == USBDEVFS_RELEASEINTERFACE:
            note("usbfs release")
            client.complete(0, 0)
        elif req == USBDEVFS_IOCTL:
            ifno, code = struct.unpack_from("<ii", bytes(arg.resolve(0, 16).retrieve()))
            if code == USBDEVFS_DISCONNECT and self.bound:
                self.bound = False
                note("xpad detached from interface %d" % ifno)
                client.complete(0, 0)
            elif code == USBDEVFS_CONNECT and not self.bound:
                self.bound = True
                note("xpad reattached to interface %d" % ifno)
                client.complete(0, 0)
            else:
                client.complete(-1, errno.ENODATA)
        else:
            client.complete(-1, errno.ENOTTY)
        return True


class Hidraw:
    def __init__(self, bus, vendor, product, descriptor):
        self.info = struct.pack("<Ihh", bus, vendor - 0x10000 if vendor > 0x7FFF else vendor,
                                product - 0x10000 if product > 0x7FFF else product)
        self.descriptor = descriptor
        self.gone = False

    def ioctl(self, handler, client):
        req = client.get_request()
        arg = client.get_arg()
        if self.gone:
            client.complete(-1, errno.ENODEV)
        elif req == HIDIOCGRAWINFO:
            arg.resolve(0, 8).update(0, self.info)
            client.complete(0, 0)
        elif req == HIDIOCGRDESCSIZE:
            arg.resolve(0, 4).update(0, struct.pack("<i", len(self.descriptor)))
            client.complete(0, 0)
        elif req == HIDIOCGRDESC:
            blob = struct.pack("<I", len(self.descriptor)) + self.descriptor
            arg.resolve(0, 4100).update(0, blob + bytes(4100 - len(blob)))
            client.complete(0, 0)
        else:
            client.complete(-1, errno.ENOTTY)
        return True

    def write(self, handler, client):
        data = bytes(client.get_arg().retrieve())
        if self.gone:
            client.complete(-1, errno.ENODEV)
            return True
        sys.stderr.write("hidraw-write %s\n" % data.hex())
        sys.stderr.flush()
        client.complete(len(data), 0)
        return True


def syspaths(device_file):
    with open(device_file) as f:
        return [line[3:].strip() for line in f if line.startswith("P: ")]


def main():
    split = sys.argv.index("--")
    options, command = sys.argv[1:split], sys.argv[split + 1:]
    device_file = options.pop(0)
    testbed = UMockdev.Testbed.new()
    testbed.add_from_file(device_file)
    emulations = []
    while options:
        option, value = options.pop(0), options.pop(0)
        target, _, spec = value.partition("=")
        if option == "--pcap":
            testbed.load_pcap("/sys" + target if target.startswith("/devices") else target, spec)
        elif option == "--hidraw":
            bus, vendor, product, hex_file = spec.split(":", 3)
            with open(hex_file) as f:
                hidraw = Hidraw(int(bus, 16), int(vendor, 16), int(product, 16), bytes.fromhex(f.read().strip()))
            handler = UMockdev.IoctlBase()
            handler.connect("handle-ioctl", hidraw.ioctl)
            handler.connect("handle-write", hidraw.write)
            testbed.attach_ioctl(target, handler)
            emulations.append((hidraw, handler))
        elif option == "--xpad":
            driver = KernelDriver(spec == "bound")
            handler = UMockdev.IoctlBase()
            handler.connect("handle-ioctl", driver.ioctl)
            testbed.attach_ioctl(target, handler)
            emulations.append((driver, handler))  # kept alive with the testbed
        else:
            sys.exit("unknown option " + option)

    loop = GLib.MainLoop()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    result = {}

    def unplug():
        for hidraw, _ in emulations:
            if isinstance(hidraw, Hidraw):
                hidraw.gone = True
        for path in reversed(syspaths(device_file)):
            testbed.uevent("/sys" + path, "remove")
            testbed.remove_device("/sys" + path)
        print("unplugged", flush=True)
        child.stdin.write("\n")
        child.stdin.flush()
        return False

    def pump():
        for line in child.stdout:
            print(line, end="", flush=True)
            if line.strip() == "unplug":
                # The testbed is not thread-safe: unplug on the main loop's thread.
                GLib.idle_add(unplug)

    threading.Thread(target=pump, daemon=True).start()

    def check():
        rc = child.poll()
        if rc is not None:
            result["rc"] = rc
            loop.quit()
            return False
        return True

    GLib.timeout_add(20, check)
    loop.run()
    sys.exit(result.get("rc", 1))


if __name__ == "__main__":
    main()
