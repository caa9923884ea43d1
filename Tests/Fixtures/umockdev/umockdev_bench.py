"""Shared runner for the umockdev device emulations: builds a testbed from a device file,
attaches an ioctl handler to one node, runs a command inside the preload and exits with its code.

Must itself run under `umockdev-wrapper` (the testbed lives in this preloaded process, and the
command inherits the preload). Uses /usr/bin/python3 for the GI bindings.
"""
import os, subprocess, sys
import gi
gi.require_version("UMockdev", "1.0")
from gi.repository import GLib, UMockdev


def split_command(argv):
    """`SCRIPT DEVICE_FILE [ARGS…] -- COMMAND…` → (DEVICE_FILE, ARGS, COMMAND)."""
    cut = argv.index("--")
    return argv[1], argv[2:cut], argv[cut + 1:]


def run(device_file, devnode, make_handler, command):
    """`make_handler(testbed, node_file)` returns an object with a `handle(handler, client)`
    method for ioctls and optionally `write(handler, client)` for writes."""
    testbed = UMockdev.Testbed.new()
    testbed.add_from_file(device_file)
    node_file = os.path.join(testbed.get_root_dir(), devnode.lstrip("/"))
    device = make_handler(testbed, node_file)
    handler = UMockdev.IoctlBase()
    handler.connect("handle-ioctl", device.handle)
    if hasattr(device, "write"):
        handler.connect("handle-write", device.write)
    testbed.attach_ioctl(devnode, handler)

    loop = GLib.MainLoop()
    child = subprocess.Popen(command)
    result = {}

    def check():
        rc = child.poll()
        if rc is None:
            return True
        result["rc"] = rc
        loop.quit()
        return False

    GLib.timeout_add(20, check)
    loop.run()
    if hasattr(device, "close"):
        device.close()
    sys.exit(result.get("rc", 1))
