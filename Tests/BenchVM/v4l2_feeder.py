#!/usr/bin/python3
"""Feeds the frames of a mono YUV4MPEG2 file to a V4L2 video output node (vivid's HDMI output,
whose frames come back on vivid's capture node when its loop_video control is on).

    v4l2_feeder.py DEVICE FILE.y4m [--repeat N] [--pictures 1,2,3] [--format GREY|NM12]

Sets the output format (GREY unless told) at the file's size (it must be what the driver's
timings give), then streams (mmap, 4 buffers) each chosen picture N times, cycling through them
until stopped; each frame waits for a buffer the driver has finished with, so the driver's frame
rate paces it. A multi-planar output (vivid with multiplanar=2) is fed through the multi-planar
API: each plane mapped on its own, NM12 as a Y plane and a CbCr plane of 0x80, rows at the
driver's bytesperline. vivid loops a frame back only when capture and output formats match.
Prints "FEEDING WxH FORMAT" once the driver has taken the first frame. Exits 0 on SIGTERM, 3
with a message when the device goes away.
"""
import ctypes
import argparse
import fcntl
import mmap
import os
import select
import signal
import struct
import sys

VIDIOC_S_FMT = 0xC0D05605   # _IOWR('V', 5, struct v4l2_format), 208 bytes
VIDIOC_REQBUFS = 0xC0145608  # _IOWR('V', 8, struct v4l2_requestbuffers), 20 bytes
VIDIOC_QUERYBUF = 0xC0585609  # _IOWR('V', 9, struct v4l2_buffer), 88 bytes on 64-bit
VIDIOC_QBUF = 0xC058560F
VIDIOC_DQBUF = 0xC0585611
VIDIOC_STREAMON = 0x40045612  # _IOW('V', 18, int)
VIDIOC_QUERYCAP = 0x80685600  # _IOR('V', 0, struct v4l2_capability), 104 bytes
V4L2_BUF_TYPE_VIDEO_OUTPUT = 2
V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE = 10
V4L2_CAP_VIDEO_OUTPUT_MPLANE = 0x00002000
V4L2_FIELD_NONE = 1
V4L2_MEMORY_MMAP = 1
BUFFERS = 4
GREY = int.from_bytes(b"GREY", "little")


def read_y4m(path):
    with open(path, "rb") as f:
        header = f.readline().split()
        if header[0] != b"YUV4MPEG2":
            sys.exit(f"{path}: not a YUV4MPEG2 file")
        fields = {t[:1]: t[1:] for t in header[1:]}
        width, height = int(fields[b"W"]), int(fields[b"H"])
        if fields.get(b"C", b"mono") != b"mono":
            sys.exit(f"{path}: only Cmono files (luma only) are fed")
        frames = []
        while True:
            line = f.readline()
            if not line:
                break
            if not line.startswith(b"FRAME"):
                sys.exit(f"{path}: bad frame header {line[:20]!r}")
            frames.append(f.read(width * height))
        return width, height, frames


class Output:
    """The node's buffer API: single-planar, or multi-planar with `planes` planes a buffer."""

    def __init__(self, fd):
        caps = bytearray(104)
        fcntl.ioctl(fd, VIDIOC_QUERYCAP, caps)
        device_caps = struct.unpack_from("<I", caps, 88)[0]
        self.mplane = bool(device_caps & V4L2_CAP_VIDEO_OUTPUT_MPLANE)
        self.type = V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE if self.mplane else V4L2_BUF_TYPE_VIDEO_OUTPUT
        self.planes = 1

    def buffer(self, index, bytesused=()):
        """struct v4l2_buffer (88 bytes): index, type, bytesused at 8, memory at 60; for the
        multi-planar API a pointer at 64 to `planes` struct v4l2_plane (64 bytes each) and their count at 72."""
        buffer = bytearray(88)
        struct.pack_into("<II", buffer, 0, index, self.type)
        struct.pack_into("<I", buffer, 60, V4L2_MEMORY_MMAP)
        if not self.mplane:
            if bytesused:
                struct.pack_into("<I", buffer, 8, bytesused[0])
            return buffer, None
        planes = ctypes.create_string_buffer(64 * self.planes)
        for plane, used in enumerate(bytesused):
            struct.pack_into("<I", planes, 64 * plane, used)
        struct.pack_into("<QI", buffer, 64, ctypes.addressof(planes), self.planes)
        return buffer, planes

    def locations(self, buffer, planes):
        """(mmap offset, length) of each plane after QUERYBUF."""
        if not self.mplane:
            return [(struct.unpack_from("<I", buffer, 64)[0], struct.unpack_from("<I", buffer, 72)[0])]
        return [(struct.unpack_from("<I", planes, 64 * p + 8)[0], struct.unpack_from("<I", planes, 64 * p + 4)[0])
                for p in range(self.planes)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("device")
    parser.add_argument("file")
    parser.add_argument("--repeat", type=int, default=12, help="frames per picture")
    parser.add_argument("--pictures", default=None, help="indexes of the pictures to show (default: all)")
    parser.add_argument("--format", default="GREY", choices=["GREY", "NM12"])
    args = parser.parse_args()

    width, height, frames = read_y4m(args.file)
    chosen = [int(i) for i in args.pictures.split(",")] if args.pictures else list(range(len(frames)))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    fourcc = int.from_bytes(args.format.encode(), "little")

    fd = os.open(args.device, os.O_RDWR)
    out = Output(fd)
    fmt = bytearray(208)
    struct.pack_into("<I", fmt, 0, out.type)
    if out.mplane:
        # struct v4l2_pix_format_mplane at 8: width, height, pixelformat, field; plane_fmt[] at 28
        # (sizeimage, bytesperline; 20 bytes each); num_planes at 188
        struct.pack_into("<4I", fmt, 8, width, height, fourcc, V4L2_FIELD_NONE)
        struct.pack_into("<B", fmt, 188, 2 if args.format == "NM12" else 1)
    else:
        # struct v4l2_pix_format at offset 8: width, height, pixelformat, field, bytesperline, sizeimage
        struct.pack_into("<6I", fmt, 8, width, height, fourcc, V4L2_FIELD_NONE, width, width * height)
    fcntl.ioctl(fd, VIDIOC_S_FMT, fmt)
    got_w, got_h, got_fourcc = struct.unpack_from("<3I", fmt, 8)
    if (got_w, got_h, got_fourcc) != (width, height, fourcc):
        sys.exit(f"{args.device}: the driver set {got_w}x{got_h} {got_fourcc.to_bytes(4, 'little')!r} "
                 f"instead of {width}x{height} {args.format}")
    if out.mplane:
        out.planes = fmt[188]
        strides = [struct.unpack_from("<I", fmt, 28 + 20 * p + 4)[0] for p in range(out.planes)]
    else:
        strides = [struct.unpack_from("<I", fmt, 8 + 16)[0]]
    stride = max(strides[0], width)

    def planes_of(picture):
        """The bytes of each plane: the Y rows at the driver's stride, then (NM12) neutral chroma."""
        rows = picture if stride == width else b"".join(picture[r * width:(r + 1) * width].ljust(stride, b"\0") for r in range(height))
        if args.format == "NM12":
            return [rows, b"\x80" * (max(strides[-1], width) * height // 2)]
        return [rows]

    try:
        requests = bytearray(struct.pack("<5I", BUFFERS, out.type, V4L2_MEMORY_MMAP, 0, 0))
        fcntl.ioctl(fd, VIDIOC_REQBUFS, requests)
        count = struct.unpack_from("<I", requests, 0)[0]
        maps = []
        for index in range(count):
            buffer, planes = out.buffer(index)
            fcntl.ioctl(fd, VIDIOC_QUERYBUF, buffer)
            maps.append([mmap.mmap(fd, length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=offset)
                         for offset, length in out.locations(buffer, planes)])

        def pictures():
            while True:
                for index in chosen:
                    for _ in range(args.repeat):
                        yield frames[index]

        source = pictures()

        def queue(index):
            data = planes_of(next(source))
            for mapping, plane in zip(maps[index], data):
                mapping[:len(plane)] = plane
            buffer, planes = out.buffer(index, [len(plane) for plane in data])
            fcntl.ioctl(fd, VIDIOC_QBUF, buffer)

        for index in range(count):
            queue(index)
        fcntl.ioctl(fd, VIDIOC_STREAMON, struct.pack("<I", out.type))
        announced = False
        poller = select.poll()
        poller.register(fd, select.POLLOUT | select.POLLERR)
        while True:
            if not poller.poll(5000):
                sys.exit(f"v4l2_feeder: {args.device}: the driver took no frame for 5 s")
            buffer, planes = out.buffer(0)
            fcntl.ioctl(fd, VIDIOC_DQBUF, buffer)
            if not announced:
                print(f"FEEDING {width}x{height} {args.format}{' multi-planar' if out.mplane else ''}", flush=True)
                announced = True
            queue(struct.unpack_from("<I", buffer, 0)[0])
    except OSError as error:
        print(f"v4l2_feeder: {args.device}: {error.strerror}", file=sys.stderr, flush=True)
        sys.exit(3)


if __name__ == "__main__":
    main()
