#!/usr/bin/python3
"""A Bluetooth controller that appears and goes away, for the bench VM's hotplug group.

    vhci_hold.py    opens /dev/vhci and asks for a controller (ff 00), prints READY hciN once the
                    kernel has registered it, and holds it until stdin closes or it is killed;
                    the controller goes away with the file.

The controller never answers the kernel's HCI commands: enough for a hotplug event and for
HCIGETDEVLIST, which is what `hwprobe watch` sees of a controller plugged in.
"""
import os
import select
import sys

fd = os.open("/dev/vhci", os.O_RDWR)
os.write(fd, b"\xff\x00")        # HCI_VENDOR_PKT, opcode 0: a primary controller
ready, _, _ = select.select([fd], [], [], 10)
if not ready:
    sys.exit("/dev/vhci gave no answer in 10 s")
answer = os.read(fd, 260)
if len(answer) < 4 or answer[0] != 0xFF:
    sys.exit(f"unexpected answer from /dev/vhci: {answer.hex()}")
index = answer[2] | (answer[3] << 8)
print(f"READY hci{index}", flush=True)
# Hold it, reading (and dropping) what the kernel sends so it never blocks on us.
while True:
    ready, _, _ = select.select([fd, sys.stdin], [], [])
    if sys.stdin in ready and not sys.stdin.buffer.read1(1):
        break
    if fd in ready:
        os.read(fd, 4096)
os.close(fd)
