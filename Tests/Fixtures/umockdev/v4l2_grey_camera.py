#!/usr/bin/python3
"""Emulates a V4L2 GREY 64x48 camera under umockdev and runs a command against it.

Usage: umockdev-wrapper /usr/bin/python3 v4l2_grey_camera.py DEVICE_FILE -- COMMAND...
The testbed lives in this (preloaded) process; COMMAND inherits the preload and sees /dev/video0.
The camera produces 5 frames, 100 ms apart, whose first pixel is the frame number (1..5), then
answers DQBUF with ENODEV as if unplugged. Exits with COMMAND's exit code.
"""
import errno, os, struct, sys, time
import umockdev_bench

W, H = 64, 48
SIZE = W * H
FRAMES = 5
SLOT = 4096  # each buffer starts on a page: mmap offsets must be page-aligned
GREY = struct.unpack("<I", b"GREY")[0]

def ioc(d, nr, size):
    return (d << 30) | (size << 16) | (ord("V") << 8) | nr

QUERYCAP = ioc(2, 0, 104)
ENUM_FMT = ioc(3, 2, 64)
G_FMT = ioc(3, 4, 208)
S_FMT = ioc(3, 5, 208)
REQBUFS = ioc(3, 8, 20)
QUERYBUF = ioc(3, 9, 88)
QBUF = ioc(3, 15, 88)
DQBUF = ioc(3, 17, 88)
STREAMON = ioc(1, 18, 4)
STREAMOFF = ioc(1, 19, 4)
ENUM_FRAMESIZES = ioc(3, 74, 44)


class Camera:
    CARD = b"umockdev GREY camera"
    CAPS = 0x00000001 | 0x04000000  # VIDEO_CAPTURE | STREAMING

    def __init__(self, node_file):
        self.node_file = node_file
        self.count = 0
        self.queued = []
        self.produced = 0
        self.streaming = False
        self.next_at = 0.0
        self.log = open(os.environ.get("V4L2_FAKE_LOG", os.devnull), "w")
        self.error_frames = {int(n) for n in os.environ.get("V4L2_FAKE_ERROR_FRAMES", "").split(",") if n.strip()}

    def handle(self, handler, client):
        req = client.get_request()
        arg = client.get_arg()
        self.log.write("ioctl %#x\n" % req); self.log.flush()

        def data(size):
            return arg.resolve(0, size)

        def done(rc=0, err=0):
            client.complete(rc, err)
            return True

        return self.respond(req, data, done)

    def respond(self, req, data, done):
        """Answers one ioctl: `data(size)` is its argument, `done(rc, errno)` completes it."""
        if req == QUERYCAP:
            d = data(104)
            caps = self.CAPS
            blob = (b"umockdev".ljust(16, b"\0") + self.CARD.ljust(32, b"\0")
                    + b"platform:umockdev".ljust(32, b"\0") + struct.pack("<IIII", 0x60000, caps | 0x80000000, caps, 0) + bytes(8))
            d.update(0, blob)
            return done()
        if req == ENUM_FMT:
            d = data(64)
            index, typ = struct.unpack_from("<II", bytes(d.retrieve()))
            if index != 0 or typ != 1:
                return done(-1, errno.EINVAL)
            d.update(8, struct.pack("<I", 0) + b"8-bit Greyscale".ljust(32, b"\0") + struct.pack("<I", GREY))
            return done()
        if req == ENUM_FRAMESIZES:
            d = data(44)
            index, fourcc = struct.unpack_from("<II", bytes(d.retrieve()))
            if index != 0 or fourcc != GREY:
                return done(-1, errno.EINVAL)
            d.update(8, struct.pack("<III", 1, W, H))
            return done()
        if req in (S_FMT, G_FMT):
            d = data(208)
            d.update(8, struct.pack("<IIIIIIII", W, H, GREY, 1, W, SIZE, 0, 0))
            return done()
        if req == REQBUFS:
            d = data(20)
            count = struct.unpack_from("<I", bytes(d.retrieve()))[0]
            self.count = min(count, 4)
            with open(self.node_file, "r+b") as f:
                f.truncate(max(self.count, 1) * SLOT)
            d.update(0, struct.pack("<I", self.count))
            return done()
        if req == QUERYBUF:
            d = data(88)
            index = struct.unpack_from("<I", bytes(d.retrieve()))[0]
            if index >= self.count:
                return done(-1, errno.EINVAL)
            d.update(64, struct.pack("<I", index * SLOT))
            d.update(72, struct.pack("<I", SIZE))
            return done()
        if req == QBUF:
            d = data(88)
            self.queued.append(struct.unpack_from("<I", bytes(d.retrieve()))[0])
            return done()
        if req == STREAMON:
            self.streaming = True
            self.next_at = time.monotonic() + 0.1
            return done()
        if req == STREAMOFF:
            self.streaming = False
            self.queued.clear()
            return done()
        if req == DQBUF:
            d = data(88)
            index = self.take_queued()
            if index < 0:
                return done(-1, -index)
            frame = bytes([self.produced]) + bytes([(i * 7) & 0xFF for i in range(1, SIZE)])
            with open(self.node_file, "r+b") as f:
                f.seek(index * SLOT)
                f.write(frame)
                f.flush()
                os.fsync(f.fileno())
            now = time.time()
            # V4L2_BUF_FLAG_MAPPED, plus V4L2_BUF_FLAG_ERROR on the frames V4L2_FAKE_ERROR_FRAMES names.
            flags = 0x1 | (0x40 if self.produced in self.error_frames else 0)
            d.update(0, struct.pack("<IIIII", index, 1, SIZE, flags, 1))
            d.update(24, struct.pack("<qq", int(now), int((now % 1) * 1e6)))
            d.update(56, struct.pack("<I", self.produced))
            return done()
        return done(-1, errno.ENOTTY)


    def take_queued(self, frames=FRAMES):
        """The buffer the next frame goes into (counted in `produced`), or -errno for DQBUF:
        ENODEV once `frames` are out (unplugged), EAGAIN until the next is due, 100 ms apart."""
        if self.produced >= frames:
            return -errno.ENODEV
        if not self.streaming or not self.queued or time.monotonic() < self.next_at:
            return -errno.EAGAIN
        self.produced += 1
        self.next_at = time.monotonic() + 0.1
        return self.queued.pop(0)


def main():
    device_file, _, command = umockdev_bench.split_command(sys.argv)
    umockdev_bench.run(device_file, "/dev/video0", lambda testbed, node_file: Camera(node_file), command)


if __name__ == "__main__":
    main()
