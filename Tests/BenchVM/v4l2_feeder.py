#!/usr/bin/python3
"""Feeds the frames of a mono YUV4MPEG2 file to a V4L2 video output node (vivid's HDMI output,
whose frames come back on vivid's capture node when its loop_video control is on).

    v4l2_feeder.py DEVICE FILE.y4m [--repeat N] [--pictures 1,2,3]

Sets the output format to GREY at the file's size (it must be what the driver's timings give),
then streams (mmap, 4 buffers) each chosen picture N times, cycling through them until stopped;
each frame waits for a buffer the driver has finished with, so the driver's frame rate paces it.
Prints "FEEDING WxH GREY" once the driver has taken the first frame. Exits 0 on SIGTERM, 3 with a message when the device goes away.
"""
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
V4L2_BUF_TYPE_VIDEO_OUTPUT = 2
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


def v4l2_buffer(index):
    """struct v4l2_buffer (88 bytes): index, type, …, memory at 60."""
    buffer = bytearray(88)
    struct.pack_into("<II", buffer, 0, index, V4L2_BUF_TYPE_VIDEO_OUTPUT)
    struct.pack_into("<I", buffer, 60, V4L2_MEMORY_MMAP)
    return buffer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("device")
    parser.add_argument("file")
    parser.add_argument("--repeat", type=int, default=12, help="frames per picture")
    parser.add_argument("--pictures", default=None, help="indexes of the pictures to show (default: all)")
    args = parser.parse_args()

    width, height, frames = read_y4m(args.file)
    chosen = [int(i) for i in args.pictures.split(",")] if args.pictures else list(range(len(frames)))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    fd = os.open(args.device, os.O_RDWR)
    fmt = bytearray(208)
    struct.pack_into("<I", fmt, 0, V4L2_BUF_TYPE_VIDEO_OUTPUT)
    # struct v4l2_pix_format at offset 8: width, height, pixelformat, field, bytesperline, sizeimage
    struct.pack_into("<6I", fmt, 8, width, height, GREY, V4L2_FIELD_NONE, width, width * height)
    fcntl.ioctl(fd, VIDIOC_S_FMT, fmt)
    got_w, got_h, got_fourcc = struct.unpack_from("<3I", fmt, 8)
    if (got_w, got_h, got_fourcc) != (width, height, GREY):
        sys.exit(f"{args.device}: the driver set {got_w}x{got_h} {got_fourcc.to_bytes(4, 'little')!r} "
                 f"instead of {width}x{height} GREY")

    try:
        requests = bytearray(struct.pack("<5I", BUFFERS, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_MEMORY_MMAP, 0, 0))
        fcntl.ioctl(fd, VIDIOC_REQBUFS, requests)
        count = struct.unpack_from("<I", requests, 0)[0]
        maps = []
        for index in range(count):
            buffer = v4l2_buffer(index)
            fcntl.ioctl(fd, VIDIOC_QUERYBUF, buffer)
            offset, length = struct.unpack_from("<I", buffer, 64)[0], struct.unpack_from("<I", buffer, 72)[0]
            maps.append(mmap.mmap(fd, length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=offset))

        def pictures():
            while True:
                for index in chosen:
                    for _ in range(args.repeat):
                        yield frames[index]

        source = pictures()

        def queue(index):
            frame = next(source)
            maps[index][:len(frame)] = frame
            buffer = v4l2_buffer(index)
            struct.pack_into("<I", buffer, 8, len(frame))  # bytesused
            fcntl.ioctl(fd, VIDIOC_QBUF, buffer)

        for index in range(count):
            queue(index)
        fcntl.ioctl(fd, VIDIOC_STREAMON, struct.pack("<I", V4L2_BUF_TYPE_VIDEO_OUTPUT))
        announced = False
        poller = select.poll()
        poller.register(fd, select.POLLOUT | select.POLLERR)
        while True:
            if not poller.poll(5000):
                sys.exit(f"v4l2_feeder: {args.device}: the driver took no frame for 5 s")
            buffer = v4l2_buffer(0)
            fcntl.ioctl(fd, VIDIOC_DQBUF, buffer)
            if not announced:
                print(f"FEEDING {width}x{height} GREY", flush=True)
                announced = True
            queue(struct.unpack_from("<I", buffer, 0)[0])
    except OSError as error:
        print(f"v4l2_feeder: {args.device}: {error.strerror}", file=sys.stderr, flush=True)
        sys.exit(3)


if __name__ == "__main__":
    main()
