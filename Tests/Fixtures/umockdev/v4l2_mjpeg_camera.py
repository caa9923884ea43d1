#!/usr/bin/python3
"""Emulates a V4L2 camera that offers only MJPG (like many USB webcams) under umockdev.

Usage: umockdev-wrapper /usr/bin/python3 v4l2_mjpeg_camera.py DEVICE_FILE WxH JPEG... -- COMMAND...
Each DQBUF hands out the next JPEG file (100 ms apart); after the last one DQBUF fails with
ENODEV, as if unplugged. The client reads it through libv4l2, which decodes the JPEGs itself.
"""
import errno, os, struct, sys, time
import umockdev_bench
from v4l2_grey_camera import Camera, ioc

MJPG = struct.unpack("<I", b"MJPG")[0]
SLOT = 256 * 1024  # room for any test JPEG; page-aligned
TRY_FMT = ioc(3, 64, 208)


class MjpegCamera(Camera):
    def __init__(self, node_file, width, height, jpegs):
        super().__init__(node_file)
        self.width, self.height = width, height
        self.jpegs = [open(path, "rb").read() for path in jpegs]

    def handle(self, handler, client):
        req = client.get_request()
        arg = client.get_arg()

        def done(rc=0, err=0):
            client.complete(rc, err)
            return True

        if req == ioc(3, 2, 64):  # ENUM_FMT
            d = arg.resolve(0, 64)
            index, typ = struct.unpack_from("<II", bytes(d.retrieve()))
            if index != 0 or typ != 1:
                return done(-1, errno.EINVAL)
            d.update(8, struct.pack("<I", 1) + b"Motion-JPEG".ljust(32, b"\0") + struct.pack("<I", MJPG))
            return done()
        if req == ioc(3, 74, 44):  # ENUM_FRAMESIZES
            d = arg.resolve(0, 44)
            index, fourcc = struct.unpack_from("<II", bytes(d.retrieve()))
            if index != 0 or fourcc != MJPG:
                return done(-1, errno.EINVAL)
            d.update(8, struct.pack("<III", 1, self.width, self.height))
            return done()
        if req in (ioc(3, 5, 208), ioc(3, 4, 208), TRY_FMT):  # S_FMT, G_FMT, TRY_FMT
            d = arg.resolve(0, 208)
            d.update(8, struct.pack("<IIIIIIII", self.width, self.height, MJPG, 1, 0, SLOT, 8, 0))
            return done()
        if req == ioc(3, 8, 20):  # REQBUFS
            d = arg.resolve(0, 20)
            self.count = min(struct.unpack_from("<I", bytes(d.retrieve()))[0], 4)
            with open(self.node_file, "r+b") as f:
                f.truncate(max(self.count, 1) * SLOT)
            d.update(0, struct.pack("<I", self.count))
            return done()
        if req == ioc(3, 9, 88):  # QUERYBUF
            d = arg.resolve(0, 88)
            index = struct.unpack_from("<I", bytes(d.retrieve()))[0]
            if index >= self.count:
                return done(-1, errno.EINVAL)
            d.update(64, struct.pack("<I", index * SLOT))
            d.update(72, struct.pack("<I", SLOT))
            return done()
        if req == ioc(3, 17, 88):  # DQBUF
            d = arg.resolve(0, 88)
            if self.produced >= len(self.jpegs):
                return done(-1, errno.ENODEV)
            if not self.streaming or not self.queued or time.monotonic() < self.next_at:
                return done(-1, errno.EAGAIN)
            index = self.queued.pop(0)
            jpeg = self.jpegs[self.produced]
            self.produced += 1
            self.next_at = time.monotonic() + 0.1
            with open(self.node_file, "r+b") as f:
                f.seek(index * SLOT)
                f.write(jpeg)
                f.flush()
            now = time.time()
            d.update(0, struct.pack("<IIIII", index, 1, len(jpeg), 0x1, 1))
            d.update(24, struct.pack("<qq", int(now), int((now % 1) * 1e6)))
            d.update(56, struct.pack("<I", self.produced))
            return done()
        if req in (ioc(1, 18, 4), ioc(1, 19, 4), ioc(3, 15, 88), ioc(2, 0, 104)):
            return super().handle(handler, client)  # STREAMON/OFF, QBUF, QUERYCAP
        return done(-1, errno.ENOTTY if (req >> 8) & 0xFF == ord("V") else errno.ENOTTY)


def main():
    device_file, extra, command = umockdev_bench.split_command(sys.argv)
    width, height = (int(v) for v in extra[0].split("x"))
    umockdev_bench.run(device_file, "/dev/video0",
                       lambda testbed, node_file: MjpegCamera(node_file, width, height, extra[1:]), command)


if __name__ == "__main__":
    main()
