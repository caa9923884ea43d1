#!/usr/bin/python3
"""What other programs do to a controller, for the bench VM's Bluetooth group.

    hci_ctl.py up INDEX     HCIDEVUP, as bluetoothd powering it on would; prints UP hciN
    hci_ctl.py hold INDEX   holds it through the kernel's HCI user channel until killed or stdin
                            closes (what our own stack does); prints HELD hciN
"""
import ctypes
import fcntl
import os
import socket
import struct
import sys

AF_BLUETOOTH, BTPROTO_HCI, HCI_CHANNEL_USER = 31, 1, 1
HCIDEVUP = 0x400448C9    # _IOW('H', 201, int)
HCIDEVDOWN = 0x400448CA  # _IOW('H', 202, int)
HCIGETDEVINFO = 0x800448D3  # _IOR('H', 211, int): struct hci_dev_info, flags (u32) at byte 16
HCI_UP = 1

command, index = sys.argv[1], int(sys.argv[2])
sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW, BTPROTO_HCI)
if command == "up":
    fcntl.ioctl(sock.fileno(), HCIDEVUP, index)
    info = bytearray(92)
    struct.pack_into("<H", info, 0, index)
    fcntl.ioctl(sock.fileno(), HCIGETDEVINFO, info)
    flags = struct.unpack_from("<I", info, 16)[0]
    if not flags & HCI_UP:
        sys.exit(f"hci{index} is not up after HCIDEVUP (flags 0x{flags:X})")
    print(f"UP hci{index}", flush=True)
elif command == "hold":
    fcntl.ioctl(sock.fileno(), HCIDEVDOWN, index)
    libc = ctypes.CDLL(None, use_errno=True)
    address = struct.pack("<HHH", AF_BLUETOOTH, index, HCI_CHANNEL_USER)
    if libc.bind(sock.fileno(), address, len(address)) != 0:
        sys.exit(f"bind hci{index} user channel: {os.strerror(ctypes.get_errno())}")
    print(f"HELD hci{index}", flush=True)
    sys.stdin.read()
else:
    sys.exit(__doc__)
