#!/usr/bin/python3
"""Emulates a multi-planar-only V4L2 camera (V4L2_CAP_VIDEO_CAPTURE_MPLANE, as many laptop and
SoC cameras are) under umockdev and runs a command against it.

Usage: umockdev-wrapper /usr/bin/python3 v4l2_mplane_camera.py DEVICE_FILE -- COMMAND...
It offers YUYV and NM12 (NV12M: a Y plane and a CbCr plane, each mapped on its own) at 64x48 for
buffer type 9 only, with rows of 80 bytes (wider than the picture) and the Y data 64 bytes into
plane 0 (data_offset, as vivid does for some formats). Frame k (1..5) has Y[row][x] =
(k + 3*row + x) & 0xFF, 0xEE in the bytes past each row's end and before the data, 0x80 chroma;
100 ms apart, then DQBUF answers ENODEV as if unplugged. Exits with COMMAND's exit code.

V4L2_MPLANE_HOSTILE makes one answer wrong, as a broken driver might:
  format-planes  S_FMT says 9 planes (more than VIDEO_MAX_PLANES)
  buffer-planes  QUERYBUF says the buffer has 9 planes
  short-plane    QUERYBUF gives plane 0 fewer bytes than 80 x 48
  bytesused      DQBUF says plane 0 holds one byte more than its length
"""
import errno, os, struct, sys, time
import umockdev_bench
from v4l2_grey_camera import (Camera, QUERYCAP, ENUM_FMT, G_FMT, S_FMT, REQBUFS, QUERYBUF, QBUF, DQBUF, STREAMON,
                              STREAMOFF, ENUM_FRAMESIZES)

W, H = 64, 48
STRIDE = 80
DATA_OFFSET = 64
Y_BYTES = STRIDE * H
UV_BYTES = STRIDE * H // 2
FRAMES = 5
SLOT = 8192  # each plane on its own pages: mmap offsets must be page-aligned
MPLANE = 9   # V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE
FORMATS = [struct.unpack("<I", name)[0] for name in (b"YUYV", b"NM12")]
NM12 = FORMATS[1]
HOSTILE = os.environ.get("V4L2_MPLANE_HOSTILE", "")


def luma_plane(k):
    """Plane 0 as the camera writes it: the data offset, then rows of STRIDE bytes."""
    rows = b"".join(bytes((k + 3 * row + x) & 0xFF for x in range(W)) + b"\xee" * (STRIDE - W) for row in range(H))
    return b"\xee" * DATA_OFFSET + rows


class MultiPlanarCamera(Camera):
    CARD = b"umockdev multi-planar camera"
    CAPS = 0x00001000 | 0x04000000  # VIDEO_CAPTURE_MPLANE | STREAMING

    def offset(self, index, plane):
        return (index * 2 + plane) * SLOT

    def fill_planes(self, d, index, bytesused):
        """Writes the planes array the client's v4l2_buffer points at (its `length` entries)."""
        wanted = struct.unpack_from("<I", bytes(d.retrieve()), 72)[0]
        if wanted < 2:
            return False
        planes = d.resolve(64, wanted * 64)
        luma_length = 1000 if HOSTILE == "short-plane" else SLOT
        used0 = luma_length + 1 if HOSTILE == "bytesused" and bytesused else (DATA_OFFSET + Y_BYTES if bytesused else 0)
        planes.update(0, struct.pack("<IIQI", used0, luma_length, self.offset(index, 0), DATA_OFFSET if bytesused else 0))
        planes.update(64, struct.pack("<IIQI", UV_BYTES if bytesused else 0, SLOT, self.offset(index, 1), 0))
        d.update(72, struct.pack("<I", 9 if HOSTILE == "buffer-planes" else 2))
        return True

    def respond(self, req, data, done):
        if req == QUERYCAP:
            return super().respond(req, data, done)
        if req == ENUM_FMT:
            d = data(64)
            index, typ = struct.unpack_from("<II", bytes(d.retrieve()))
            if index >= len(FORMATS) or typ != MPLANE:
                return done(-1, errno.EINVAL)
            d.update(8, struct.pack("<I", 0) + b"pixel format".ljust(32, b"\0") + struct.pack("<I", FORMATS[index]))
            return done()
        if req == ENUM_FRAMESIZES:
            d = data(44)
            index, fourcc = struct.unpack_from("<II", bytes(d.retrieve()))
            if index != 0 or fourcc not in FORMATS:
                return done(-1, errno.EINVAL)
            d.update(8, struct.pack("<III", 1, W, H))
            return done()
        if req in (S_FMT, G_FMT):
            d = data(208)
            if struct.unpack_from("<I", bytes(d.retrieve()))[0] != MPLANE:
                return done(-1, errno.EINVAL)
            # struct v4l2_pix_format_mplane at 8: size, NM12, progressive, then plane_fmt[0..1]
            # (sizeimage, bytesperline) at 28 and 48, num_planes at 188.
            d.update(8, struct.pack("<IIIII", W, H, NM12, 1, 0))
            d.update(28, struct.pack("<II", DATA_OFFSET + Y_BYTES, STRIDE) + bytes(12) + struct.pack("<II", UV_BYTES, STRIDE))
            d.update(188, bytes([9 if HOSTILE == "format-planes" else 2]))
            return done()
        if req == REQBUFS:
            d = data(20)
            count, typ = struct.unpack_from("<II", bytes(d.retrieve()))
            if typ != MPLANE:
                return done(-1, errno.EINVAL)
            self.count = min(count, 4)
            with open(self.node_file, "r+b") as f:
                f.truncate(max(self.count, 1) * 2 * SLOT)
            d.update(0, struct.pack("<I", self.count))
            return done()
        if req == QUERYBUF:
            d = data(88)
            index, typ = struct.unpack_from("<II", bytes(d.retrieve()))
            if index >= self.count or typ != MPLANE or not self.fill_planes(d, index, bytesused=False):
                return done(-1, errno.EINVAL)
            return done()
        if req == QBUF:
            d = data(88)
            index, typ = struct.unpack_from("<II", bytes(d.retrieve()))
            planes = struct.unpack_from("<I", bytes(d.retrieve()), 72)[0]
            if index >= self.count or typ != MPLANE or planes < 2:
                return done(-1, errno.EINVAL)
            self.queued.append(index)
            return done()
        if req in (STREAMON, STREAMOFF):
            if struct.unpack("<i", bytes(data(4).retrieve()))[0] != MPLANE:
                return done(-1, errno.EINVAL)
            self.streaming = req == STREAMON
            self.next_at = time.monotonic() + 0.1
            if not self.streaming:
                self.queued.clear()
            return done()
        if req == DQBUF:
            d = data(88)
            index = self.take_queued(FRAMES)
            if index < 0:
                return done(-1, -index)
            with open(self.node_file, "r+b") as f:
                f.seek(self.offset(index, 0))
                f.write(luma_plane(self.produced))
                f.seek(self.offset(index, 1))
                f.write(b"\x80" * UV_BYTES)
                f.flush()
                os.fsync(f.fileno())
            if not self.fill_planes(d, index, bytesused=True):
                return done(-1, errno.EINVAL)
            now = time.time()
            d.update(0, struct.pack("<IIIII", index, MPLANE, 0, 0x1, 1))
            d.update(24, struct.pack("<qq", int(now), int((now % 1) * 1e6)))
            d.update(56, struct.pack("<I", self.produced))
            return done()
        return done(-1, errno.ENOTTY)


def main():
    device_file, _, command = umockdev_bench.split_command(sys.argv)
    umockdev_bench.run(device_file, "/dev/video0", lambda testbed, node_file: MultiPlanarCamera(node_file), command)


if __name__ == "__main__":
    main()
