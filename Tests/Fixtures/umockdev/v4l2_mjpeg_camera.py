#!/usr/bin/python3
"""Emulates a V4L2 camera that offers only MJPG (like many USB webcams) under umockdev.

Usage: umockdev-wrapper /usr/bin/python3 v4l2_mjpeg_camera.py DEVICE_FILE WxH JPEG... -- COMMAND...
Each DQBUF hands out the next JPEG file (100 ms apart); after the last one DQBUF fails with
ENODEV, as if unplugged. The client reads it through libv4l2, which decodes the JPEGs itself.
With V4L2_MJPEG_MPLANE=1 the camera speaks only the multi-planar API (buffer type 9, one plane),
which libv4l2 reaches through its mplane plugin.
"""
import errno, os, struct, sys, time
import umockdev_bench
from v4l2_grey_camera import Camera, ioc

MJPG = struct.unpack("<I", b"MJPG")[0]
SLOT = 256 * 1024  # room for any test JPEG; page-aligned
TRY_FMT = ioc(3, 64, 208)
MPLANE = os.environ.get("V4L2_MJPEG_MPLANE") == "1"
TYPE = 9 if MPLANE else 1


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
            if index != 0 or typ != TYPE:
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
            if struct.unpack_from("<I", bytes(d.retrieve()))[0] != TYPE:
                return done(-1, errno.EINVAL)
            if MPLANE:  # pix_mp: size, MJPG, progressive, JPEG colorspace; plane 0 at 28; one plane
                d.update(8, struct.pack("<IIIII", self.width, self.height, MJPG, 1, 7))
                d.update(28, struct.pack("<II", SLOT, 0))
                d.update(188, bytes([1]))
            else:
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
            self.locate(d, index, bytesused=0)
            return done()
        if req == ioc(3, 17, 88):  # DQBUF
            d = arg.resolve(0, 88)
            index = self.take_queued(len(self.jpegs))
            if index < 0:
                return done(-1, -index)
            jpeg = self.jpegs[self.produced - 1]
            with open(self.node_file, "r+b") as f:
                f.seek(index * SLOT)
                f.write(jpeg)
                f.flush()
            now = time.time()
            d.update(0, struct.pack("<IIIII", index, TYPE, len(jpeg), 0x1, 1))
            self.locate(d, index, bytesused=len(jpeg))
            d.update(24, struct.pack("<qq", int(now), int((now % 1) * 1e6)))
            d.update(56, struct.pack("<I", self.produced))
            return done()
        if req == ioc(2, 0, 104) and MPLANE:  # QUERYCAP: VIDEO_CAPTURE_MPLANE | STREAMING only
            caps = 0x00001000 | 0x04000000
            arg.resolve(0, 104).update(0, b"umockdev".ljust(16, b"\0") + b"umockdev MJPEG camera".ljust(32, b"\0")
                                       + b"platform:umockdev".ljust(32, b"\0")
                                       + struct.pack("<IIII", 0x60000, caps | 0x80000000, caps, 0) + bytes(8))
            return done()
        if req in (ioc(1, 18, 4), ioc(1, 19, 4), ioc(3, 15, 88), ioc(2, 0, 104)):
            return super().handle(handler, client)  # STREAMON/OFF, QBUF, QUERYCAP
        return done(-1, errno.ENOTTY if (req >> 8) & 0xFF == ord("V") else errno.ENOTTY)


    def locate(self, d, index, bytesused):
        """Where buffer `index` is: m.offset and length in the single-planar API, else plane 0 of
        the planes array the client's v4l2_buffer points at."""
        if not MPLANE:
            d.update(64, struct.pack("<I", index * SLOT))
            d.update(72, struct.pack("<I", SLOT))
            return
        d.resolve(64, 64).update(0, struct.pack("<IIQI", bytesused, SLOT, index * SLOT, 0))
        d.update(72, struct.pack("<I", 1))


def main():
    device_file, extra, command = umockdev_bench.split_command(sys.argv)
    width, height = (int(v) for v in extra[0].split("x"))
    umockdev_bench.run(device_file, "/dev/video0",
                       lambda testbed, node_file: MjpegCamera(node_file, width, height, extra[1:]), command)


if __name__ == "__main__":
    main()
