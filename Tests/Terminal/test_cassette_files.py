"""Issue 17, from outside the process: a camera cassette being recorded (`import --record`) is never
half there. Killed, nothing is left (the frames stream into an unnamed file); interrupted, the session
is kept whole: the cassette and its frame file, agreeing on size and count."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import vb1video
from hostile import leftovers, password_file, wait_until
from terminal import base_environment, hwprobe_binary


def slow_import(tmp_path: Path, out_dir: Path) -> subprocess.Popen:
    """An import that keeps streaming: the first of three codes, thirty times, at 10 frames a second."""
    data = vb1video.container(b'{"v":1}', "pw")
    video = vb1video.video(tmp_path / "one-code.y4m", [vb1video.codes(data, 3)[0]] * 30)
    return subprocess.Popen([hwprobe_binary(), "import", "--camera", f"file:{video}", "--password-file", str(password_file(tmp_path, "pw")),
                             "--out", str(out_dir / "vault.json"), "--json", "--record", str(out_dir / "cam.cassette")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment())


def frames_file_size(pid: int, out_dir: Path) -> int | None:
    """The size of the file the process is writing in out_dir (an unnamed one shows as deleted)."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(out_dir) + "/"):
                    return os.stat(f"/proc/{pid}/fd/{fd}").st_size
            except OSError:
                continue
    except OSError:
        return None
    return None


def test_killed_while_recording_nothing_is_left(tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    process = slow_import(tmp_path, out_dir)
    try:
        wait_until(lambda: (frames_file_size(process.pid, out_dir) or 0) > 0, 30, "frames on their way to disk")
        assert leftovers(out_dir, set()) == [], "nothing is named while the frames are written"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        process.kill()
    assert leftovers(out_dir, set()) == [], "no cassette, no frame file, no temporary"


def test_interrupted_the_session_is_kept_whole(tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    process = slow_import(tmp_path, out_dir)
    try:
        wait_until(lambda: (frames_file_size(process.pid, out_dir) or 0) > 0, 30, "frames on their way to disk")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert leftovers(out_dir, {"cam.cassette", "cam.cassette.y4m"}) == []
    text = (out_dir / "cam.cassette").read_text()
    lines = text.splitlines()
    assert lines[0] == "hwprobe-cassette 1.1"
    frames = next(line for line in lines if line.startswith("frames y4m ")).split()
    assert frames[2] == "cam.cassette.y4m"
    assert int(frames[3]) == (out_dir / "cam.cassette.y4m").stat().st_size
    assert int(frames[5]) == sum(1 for line in lines if line.startswith("frame ")) > 0
    assert [line for line in lines if line.startswith("end ")], "the cassette has its end line"
    for name in ("cam.cassette", "cam.cassette.y4m"):
        assert (out_dir / name).stat().st_mode & 0o777 == 0o600
