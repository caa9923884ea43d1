"""Issue 27, item 6: --btsnoop on a full disk. A capture the disk stops taking is said (exit 3, the
contract's code for a device or I/O problem) and keeps only whole records, never a record cut
short under a success; a capture that cannot even be created is not a usage error and leaves
nothing behind. The full disk is a small tmpfs mounted for the test (root only)."""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import pytest

from terminal import base_environment, hwprobe_binary

MIRROR = "C0:FF:EE:00:4F:2A"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs: needs root")


@pytest.fixture
def small_disk(tmp_path):
    point = tmp_path / "disk"
    point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(point)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield point
    subprocess.run(["umount", str(point)], capture_output=True)


def fill(point: Path, leave_pages: int = 0):
    """Takes every page of the tmpfs but `leave_pages`: the write after those fails with ENOSPC."""
    filler = point / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    if leave_pages:
        os.truncate(filler, max(0, filler.stat().st_size - leave_pages * 4096))


def records(capture: bytes) -> tuple[int, int]:
    """(whole records, bytes left over after the last whole one) of a btsnoop capture."""
    assert capture[:8] == b"btsnoop\0"
    offset, count = 16, 0
    while offset + 24 <= len(capture):
        _, included = struct.unpack(">II", capture[offset:offset + 8])
        if offset + 24 + included > len(capture):
            break
        offset += 24 + included
        count += 1
    return count, len(capture) - offset


def hwprobe(*args):
    return subprocess.run([hwprobe_binary(), *args], capture_output=True, text=True, env=base_environment(), timeout=60,
                          stdin=subprocess.DEVNULL)


@needs_root
def test_a_capture_the_disk_stops_taking_is_reported_and_ends_on_a_whole_record(small_disk):
    fill(small_disk, leave_pages=1)
    # A whole unattended scan on the bench is some 10 KB of HCI traffic: more than the page left.
    capture = small_disk / "scan.btsnoop"
    result = hwprobe("scan", "--hci", "sim:", "--yes", "--json", "--btsnoop", str(capture))
    assert result.returncode == 3, result.stderr
    assert "scan.btsnoop" in result.stderr and "capture stopped" in result.stderr, result.stderr
    whole, left_over = records(capture.read_bytes())
    assert whole > 0 and left_over == 0, f"{whole} whole records, then {left_over} bytes of a cut one"


@needs_root
@pytest.mark.parametrize("command", [["gatt", "--hci", "sim:", MIRROR], ["check", "--hci", "sim:", MIRROR]])
def test_no_room_to_create_the_capture_is_not_a_usage_error_and_leaves_nothing(small_disk, command):
    fill(small_disk)
    capture = small_disk / "capture.btsnoop"
    result = hwprobe(*command, "--btsnoop", str(capture))
    assert result.returncode == 3, result.stderr
    assert "capture.btsnoop" in result.stderr and "no space" in result.stderr.lower(), result.stderr
    assert sorted(os.listdir(small_disk)) == ["filler"], "no empty capture is left behind"
