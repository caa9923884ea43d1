#!/usr/bin/python3
"""Plugs a USB serial port in and out of a umockdev testbed while a command watches.

Usage: umockdev-wrapper /usr/bin/python3 hotplug_watch.py -- COMMAND...
Starts COMMAND inside the testbed, then (after its first output line, or 1.5 s) adds ttyACM0
under a USB device with an `add` uevent, and 1 s later removes it with a `remove` uevent. The
command's stdout is passed through; the exit code is the command's.
"""
import os, subprocess, sys, threading, time
import gi
gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev

command = sys.argv[sys.argv.index("--") + 1:]
testbed = UMockdev.Testbed.new()
# Something present from the start: the watch must report it as added first.
present = testbed.add_device("tty", "ttyUSB0", testbed.add_device("usb", "1-2", None, [], ["DEVTYPE", "usb_device"]), [], ["DEVNAME", "/dev/ttyUSB0"])
root = testbed.get_root_dir()


def link_device(path):
    # umockdev gives a child device no `device` link to its parent; the kernel does, and the
    # serial port probe looks for it.
    os.symlink("..", root + path + "/device")


link_device(present)
child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
first = threading.Event()


def relay():
    for line in child.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        first.set()


reader = threading.Thread(target=relay)
reader.start()
first.wait(1.5)
time.sleep(0.3)
parent = testbed.add_device("usb", "1-1", None, ["idVendor", "2fe3", "idProduct", "0004"], ["DEVTYPE", "usb_device"])
tty = testbed.add_device("tty", "ttyACM0", parent, [], ["DEVNAME", "/dev/ttyACM0"])
link_device(tty)
testbed.uevent(tty, "add")
time.sleep(1.0)
testbed.uevent(tty, "remove")
testbed.remove_device(tty)
status = child.wait(timeout=30)
reader.join()
sys.exit(status)
