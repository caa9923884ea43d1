#!/usr/bin/python3
"""A force-feedback pad made with the kernel's uinput, for the bench VM's evdev group.

    uinput_pad.py LOG [--name NAME] [--effects N] [--vanish-after-plays N]

Creates a pad (a few buttons, EV_FF with FF_RUMBLE and FF_GAIN) and serves its force feedback
the way a real driver would: it answers every effect upload and erase the kernel forwards
(UI_BEGIN_FF_UPLOAD / UI_END_FF_UPLOAD, UI_BEGIN_FF_ERASE / UI_END_FF_ERASE) and writes one JSON
line to LOG for each thing it is told, in the order the kernel tells it:

    {"op": "upload", "id": 0, "strong": 46260, "weak": 46260, "length": 80, "delay": 0, "type": 80}
    {"op": "play", "id": 0, "count": 1}          (EV_FF code = effect id, value = count; 0 stops)
    {"op": "gain", "value": 65535}                (EV_FF FF_GAIN)
    {"op": "erase", "id": 0}

Once the evdev node exists it prints `READY /dev/input/eventN` (flushed) on stdout. It runs until
SIGTERM or SIGINT, then destroys the device; with --vanish-after-plays N it destroys the
device (as if unplugged) and exits right after the Nth play with a count above 0. Only the standard library: the ioctl
numbers and structure layouts (x86-64) are written out below from <linux/uinput.h> and
<linux/input.h>.
"""
import fcntl
import json
import os
import select
import signal
import struct
import sys
import time

# ioctl numbers: _IOC(dir, 'U', nr, size) with dir 1 = write, 2 = read, 3 = both.
def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (ord("U") << 8) | nr

UI_DEV_CREATE = _ioc(0, 1, 0)
UI_DEV_DESTROY = _ioc(0, 2, 0)
UINPUT_SETUP = struct.Struct("=HHHH80sI")          # struct uinput_setup: input_id, name, ff_effects_max
UI_DEV_SETUP = _ioc(1, 3, UINPUT_SETUP.size)
UI_SET_EVBIT = _ioc(1, 100, 4)
UI_SET_KEYBIT = _ioc(1, 101, 4)
UI_SET_FFBIT = _ioc(1, 107, 4)
def UI_GET_SYSNAME(length):
    return _ioc(2, 44, length)

# struct ff_effect (48 bytes on x86-64): type, id, direction, trigger (button, interval),
# replay (length, delay), then the union at offset 16 (8-aligned: ff_periodic_effect holds a
# pointer); ff_rumble_effect is its first two u16: strong, weak.
FF_EFFECT = struct.Struct("=HhHHHHH2xHH28x")
assert FF_EFFECT.size == 48
# struct uinput_ff_upload: request_id, retval, effect, old
FF_UPLOAD = struct.Struct("=Ii48s48s")
UI_BEGIN_FF_UPLOAD = _ioc(3, 200, FF_UPLOAD.size)
UI_END_FF_UPLOAD = _ioc(1, 201, FF_UPLOAD.size)
# struct uinput_ff_erase: request_id, retval, effect_id
FF_ERASE = struct.Struct("=IiI")
UI_BEGIN_FF_ERASE = _ioc(3, 202, FF_ERASE.size)
UI_END_FF_ERASE = _ioc(1, 203, FF_ERASE.size)

INPUT_EVENT = struct.Struct("=qqHHi")              # struct input_event: timeval, type, code, value
EV_SYN, EV_KEY, EV_FF, EV_UINPUT = 0x00, 0x01, 0x15, 0x0101
UI_FF_UPLOAD, UI_FF_ERASE = 1, 2
FF_RUMBLE, FF_GAIN = 0x50, 0x60
BUTTONS = [0x130, 0x131, 0x133, 0x134, 0x13A, 0x13B]   # BTN_SOUTH, EAST, NORTH, WEST, SELECT, START
BUS_USB = 0x03


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    log_path = args[0]
    name = "hwprobe bench uinput pad"
    effects = 4
    vanish_after = None
    i = 1
    while i < len(args):
        if args[i] == "--name":
            name = args[i + 1]; i += 2
        elif args[i] == "--vanish-after-plays":
            vanish_after = int(args[i + 1]); i += 2
        elif args[i] == "--effects":
            effects = int(args[i + 1]); i += 2
        else:
            sys.exit(f"uinput_pad.py: unknown option {args[i]}")

    log = open(log_path, "a", buffering=1)
    def record(**entry):
        log.write(json.dumps(entry) + "\n")

    fd = os.open("/dev/uinput", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, UI_SET_EVBIT, EV_KEY)
    for button in BUTTONS:
        fcntl.ioctl(fd, UI_SET_KEYBIT, button)
    fcntl.ioctl(fd, UI_SET_EVBIT, EV_FF)
    fcntl.ioctl(fd, UI_SET_FFBIT, FF_RUMBLE)
    fcntl.ioctl(fd, UI_SET_FFBIT, FF_GAIN)
    # pid.codes' test IDs (1209:0001): no device-specific pad driver claims them.
    setup = UINPUT_SETUP.pack(BUS_USB, 0x1209, 0x0001, 1, name.encode()[:79], effects)
    fcntl.ioctl(fd, UI_DEV_SETUP, setup)
    fcntl.ioctl(fd, UI_DEV_CREATE)

    # The evdev node: /sys/devices/virtual/input/inputN/eventM, and devtmpfs makes /dev/input/eventM.
    buf = bytearray(64)
    fcntl.ioctl(fd, UI_GET_SYSNAME(len(buf)), buf)
    sysname = buf.split(b"\0", 1)[0].decode()
    node = None
    deadline = time.monotonic() + 10
    while node is None:
        try:
            events = [e for e in os.listdir(f"/sys/devices/virtual/input/{sysname}") if e.startswith("event")]
        except FileNotFoundError:
            events = []
        if events and os.path.exists(f"/dev/input/{events[0]}"):
            node = f"/dev/input/{events[0]}"
        elif time.monotonic() > deadline:
            sys.exit(f"uinput_pad.py: no evdev node for {sysname} within 10 s")
        else:
            time.sleep(0.05)

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    print(f"READY {node}", flush=True)

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not stopping:
        try:
            ready = poller.poll(500)
        except InterruptedError:
            continue
        if ready:
            while not stopping:
                try:
                    data = os.read(fd, INPUT_EVENT.size * 32)
                except BlockingIOError:
                    break
                for offset in range(0, len(data), INPUT_EVENT.size):
                    _, _, kind, code, value = INPUT_EVENT.unpack_from(data, offset)
                    if kind == EV_UINPUT and code == UI_FF_UPLOAD:
                        request = bytearray(FF_UPLOAD.pack(value, 0, bytes(48), bytes(48)))
                        fcntl.ioctl(fd, UI_BEGIN_FF_UPLOAD, request)
                        _, _, effect, _ = FF_UPLOAD.unpack(request)
                        etype, eid, _, _, _, length, delay, strong, weak = FF_EFFECT.unpack(effect)
                        entry = dict(op="upload", id=eid, type=etype, length=length, delay=delay)
                        if etype == FF_RUMBLE:
                            entry.update(strong=strong, weak=weak)
                        record(**entry)
                        # accept rumble, refuse anything else as a rumble-only pad does
                        fcntl.ioctl(fd, UI_END_FF_UPLOAD, FF_UPLOAD.pack(value, 0 if etype == FF_RUMBLE else -22, effect, bytes(48)))
                    elif kind == EV_UINPUT and code == UI_FF_ERASE:
                        request = bytearray(FF_ERASE.pack(value, 0, 0))
                        fcntl.ioctl(fd, UI_BEGIN_FF_ERASE, request)
                        _, _, eid = FF_ERASE.unpack(request)
                        record(op="erase", id=eid)
                        fcntl.ioctl(fd, UI_END_FF_ERASE, FF_ERASE.pack(value, 0, eid))
                    elif kind == EV_FF and code == FF_GAIN:
                        record(op="gain", value=value)
                    elif kind == EV_FF:
                        record(op="play", id=code, count=value)
                        if value > 0 and vanish_after is not None:
                            vanish_after -= 1
                            if vanish_after == 0:
                                record(op="vanished")
                                stopping.append(1)
                                break
    fcntl.ioctl(fd, UI_DEV_DESTROY)
    os.close(fd)


if __name__ == "__main__":
    main()
