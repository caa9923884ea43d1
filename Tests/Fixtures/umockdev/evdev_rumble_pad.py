#!/usr/bin/python3
"""Emulates an evdev pad with FF_RUMBLE and FF_GAIN under umockdev and runs a command against it.

Usage: umockdev-wrapper /usr/bin/python3 evdev_rumble_pad.py DEVICE_FILE LOG [GONE_AFTER] -- COMMAND...
Answers the capability ioctls like a kernel force-feedback driver, keeps uploaded effects in
16 slots (EVIOCSFF assigns ids, EVIOCRMFF frees them) and writes one JSON line per upload,
play (an EV_FF write) and erase to LOG, so a test checks exactly what the device was told.
With GONE_AFTER, every call after that many EV_FF plays fails with ENODEV, as the kernel
answers once the pad is unplugged.
"""
import errno, json, struct, sys, time
import umockdev_bench

EV_FF, FF_RUMBLE, FF_GAIN = 0x15, 0x50, 0x60
SLOTS = 16


def ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (ord("E") << 8) | nr


EVIOCGID = ioc(2, 0x02, 8)
EVIOCSFF = ioc(1, 0x80, 48)
EVIOCRMFF = ioc(1, 0x81, 4)
EVIOCGEFFECTS = ioc(2, 0x84, 4)


def bits(*numbers, size):
    out = bytearray(size)
    for n in numbers:
        out[n // 8] |= 1 << (n % 8)
    return bytes(out)


class RumblePad:
    def __init__(self, log_path, gone_after):
        self.log = open(log_path, "w")
        self.effects = {}
        self.plays = 0
        self.gone_after = gone_after
        self.started = time.monotonic()

    def record(self, **entry):
        entry["ms"] = round((time.monotonic() - self.started) * 1000, 1)
        self.log.write(json.dumps(entry) + "\n")
        self.log.flush()

    @property
    def gone(self):
        return self.gone_after is not None and self.plays >= self.gone_after

    def handle(self, handler, client):
        req = client.get_request()
        arg = client.get_arg()

        def done(rc=0, err=0):
            client.complete(rc, err)
            return True

        if self.gone:
            return done(-1, errno.ENODEV)
        kind, number, size = (req >> 8) & 0xFF, req & 0xFF, (req >> 16) & 0x3FFF
        if kind != ord("E"):
            return done(-1, errno.ENOTTY)
        if number == 0x06:  # EVIOCGNAME(len)
            d = arg.resolve(0, size)
            d.update(0, b"umockdev rumble pad\0"[:size])
            return done(len("umockdev rumble pad"))
        if req == EVIOCGID:
            arg.resolve(0, 8).update(0, struct.pack("<HHHH", 3, 0x045E, 0x028E, 0x0114))
            return done()
        if number == 0x20:  # EVIOCGBIT(0, len): event types
            arg.resolve(0, size).update(0, bits(0, EV_FF, size=size))
            return done(size)
        if number == 0x20 + EV_FF:  # EVIOCGBIT(EV_FF, len)
            arg.resolve(0, size).update(0, bits(FF_RUMBLE, FF_GAIN, size=size))
            return done(size)
        if number >= 0x20 and number < 0x40:  # other EVIOCGBIT: nothing
            arg.resolve(0, size).update(0, bytes(size))
            return done(size)
        if req == EVIOCGEFFECTS:
            arg.resolve(0, 4).update(0, struct.pack("<i", SLOTS))
            return done()
        if req == EVIOCSFF:
            d = arg.resolve(0, 48)
            raw = bytes(d.retrieve())
            kind_, effect_id = struct.unpack_from("<Hh", raw, 0)
            length, delay = struct.unpack_from("<HH", raw, 10)
            strong, weak = struct.unpack_from("<HH", raw, 16)
            if kind_ != FF_RUMBLE:
                return done(-1, errno.EINVAL)
            if effect_id == -1:
                free = [i for i in range(SLOTS) if i not in self.effects]
                if not free:
                    return done(-1, errno.ENOSPC)
                effect_id = free[0]
            elif effect_id not in self.effects:
                return done(-1, errno.EINVAL)
            self.effects[effect_id] = (strong, weak, length)
            d.update(2, struct.pack("<h", effect_id))
            self.record(op="upload", id=effect_id, strong=strong, weak=weak, length=length, delay=delay)
            return done()
        if req == EVIOCRMFF:
            effect_id = struct.unpack_from("<q", bytes(arg.retrieve()))[0]
            if effect_id not in self.effects:
                return done(-1, errno.EINVAL)
            del self.effects[effect_id]
            self.record(op="erase", id=effect_id)
            return done()
        return done(-1, errno.ENOTTY)

    def write(self, handler, client):
        data = bytes(client.get_arg().retrieve())
        if self.gone:
            client.complete(-1, errno.ENODEV)
            return True
        if len(data) % 24:
            client.complete(-1, errno.EINVAL)
            return True
        for offset in range(0, len(data), 24):
            kind, code, value = struct.unpack_from("<HHi", data, offset + 16)
            if kind != EV_FF:
                continue
            if code == FF_GAIN:
                self.record(op="gain", value=value)
            else:
                self.record(op="play", id=code, count=value)
                if value > 0:
                    self.plays += 1
        client.complete(len(data), 0)
        return True

    def close(self):
        self.log.close()


def main():
    device_file, extra, command = umockdev_bench.split_command(sys.argv)
    log_path = extra[0]
    gone_after = int(extra[1]) if len(extra) > 1 else None
    umockdev_bench.run(device_file, "/dev/input/event0", lambda tb, node: RumblePad(log_path, gone_after), command)


if __name__ == "__main__":
    main()
