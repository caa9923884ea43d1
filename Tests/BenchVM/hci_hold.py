#!/usr/bin/python3
"""Holds a controller through the kernel's HCI user channel until stdin closes, so a test can
check what a second program gets when it tries to open the same controller. Prints HELD hciN.

    hci_hold.py INDEX
"""
import ctypes
import fcntl
import os
import socket
import struct
import sys

AF_BLUETOOTH, BTPROTO_HCI, HCI_CHANNEL_USER = 31, 1, 1
HCIDEVDOWN = 0x400448CA  # _IOW('H', 202, int)

index = int(sys.argv[1])
sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW, BTPROTO_HCI)
fcntl.ioctl(sock.fileno(), HCIDEVDOWN, index)
libc = ctypes.CDLL(None, use_errno=True)
address = struct.pack("<HHH", AF_BLUETOOTH, index, HCI_CHANNEL_USER)
if libc.bind(sock.fileno(), address, len(address)) != 0:
    error = ctypes.get_errno()
    sys.exit(f"bind hci{index} user channel: {os.strerror(error)}")
print(f"HELD hci{index}", flush=True)
sys.stdin.read()
