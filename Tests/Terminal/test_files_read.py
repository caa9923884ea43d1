"""Issue 27, item 3: every file a command reads is opened without blocking and checked to be what
it should be before a byte is read. A FIFO (nobody writing), a directory or a socket where a video,
a cassette or a cassette's frames belong ends the run at once with words that say what is there,
instead of an open(2) that waits for ever, deaf to Ctrl-C and SIGTERM. A pipe behind
`file:/dev/stdin` is not refused."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

import vb1video
from hostile import password_file
from terminal import base_environment, hwprobe_binary

FIXTURES = Path(__file__).resolve().parents[1] / "Fixtures" / "cassettes"
DEADLINE = 20  # seconds: each of these used to hang for ever


def run(args, **kwargs):
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([hwprobe_binary()] + args, capture_output=True, text=True, env=base_environment(),
                          timeout=DEADLINE, **kwargs)


def special(tmp_path: Path, kind: str) -> tuple[Path, object]:
    """A FIFO nobody writes to, a directory, or a listening UNIX socket, at one path."""
    path = tmp_path / f"a-{kind}"
    keep = None
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        keep = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        keep.bind(str(path))
        keep.listen()
    return path, keep


WORDS = {"fifo": "a FIFO", "directory": "a directory", "socket": "a socket"}


@pytest.mark.parametrize("kind", ["fifo", "directory", "socket"])
def test_a_camera_file_that_is_no_file(tmp_path, kind):
    path, _keep = special(tmp_path, kind)
    result = run(["import", "--camera", f"file:{path}", "--password-file", str(password_file(tmp_path, "pw")),
                  "--out", str(tmp_path / "vault.json")])
    assert result.returncode == 3, result.stderr
    assert WORDS[kind] in result.stderr and str(path) in result.stderr, result.stderr
    assert not (tmp_path / "vault.json").exists()


@pytest.mark.parametrize("kind", ["fifo", "directory", "socket"])
@pytest.mark.parametrize("command", [["gatt", "--hci", "replay:{}", "B0:B0:B0:00:00:01"],
                                     ["haptics", "--device", "replay:{}", "--cue", "success"],
                                     ["import", "--camera", "replay:{}", "--password-file", "{pw}", "--out", "{out}"]])
def test_a_cassette_that_is_no_file(tmp_path, kind, command):
    path, _keep = special(tmp_path, kind)
    args = [a.format(path, pw=password_file(tmp_path, "pw"), out=tmp_path / "vault.json") for a in command]
    result = run(args)
    assert result.returncode == 3, result.stderr
    assert WORDS[kind] in result.stderr, result.stderr


def test_list_on_a_fifo_cassette_reports_the_problem(tmp_path):
    path, _ = special(tmp_path, "fifo")
    result = run(["list", "--hci", f"replay:{path}", "--scan-seconds", "0.2", "--json"])
    assert result.returncode == 0, result.stderr
    assert "a FIFO" in result.stdout, result.stdout


def test_a_cassettes_frames_file_that_is_a_fifo(tmp_path):
    # The cassette names its frames file, beside it.
    shutil.copy(FIXTURES / "vm-vivid-import.cassette", tmp_path / "vm-vivid-import.cassette")
    os.mkfifo(tmp_path / "vm-vivid-import.cassette.y4m")
    result = run(["import", "--camera", f"replay:{tmp_path / 'vm-vivid-import.cassette'}", "--password-file", str(password_file(tmp_path, "pw")),
                  "--out", str(tmp_path / "vault.json")])
    assert result.returncode == 3, result.stderr
    assert "a FIFO" in result.stderr, result.stderr


def test_a_pipe_on_dev_stdin_is_not_refused_as_a_fifo(tmp_path):
    """An anonymous pipe is what `file:/dev/stdin` means; the check refuses named FIFOs only. The
    header is read once, by the reader that then plays the frames (issue 27, item 16: the camera
    used to open the path twice, and the first reader ate the header)."""
    data = vb1video.container(b'{"piped":1}', "pw")
    video = vb1video.video(tmp_path / "codes.y4m", vb1video.codes(data, 2))
    out = tmp_path / "vault.json"
    with open(video, "rb") as frames:
        feeder = subprocess.Popen(["cat"], stdin=frames, stdout=subprocess.PIPE)
        result = run(["import", "--camera", "file:/dev/stdin?pace=max", "--password-file", str(password_file(tmp_path, "pw")),
                      "--out", str(out), "--json"], stdin=feeder.stdout)
        feeder.stdout.close()
        feeder.wait(timeout=DEADLINE)
    assert "FIFO" not in result.stderr and "not a regular file" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == b'{"piped":1}'


def test_a_process_substitution_is_read_once(tmp_path):
    """`file:<(cat codes.y4m)`: bash hands hwprobe /dev/fd/N, an anonymous pipe."""
    data = vb1video.container(b'{"substituted":1}', "pw")
    video = vb1video.video(tmp_path / "codes.y4m", vb1video.codes(data, 2))
    out = tmp_path / "vault.json"
    result = subprocess.run(["bash", "-c", '"$1" import --camera file:<(cat "$2")?pace=max --password-file "$3" --out "$4" --json',
                             "bash", hwprobe_binary(), str(video), str(password_file(tmp_path, "pw")), str(out)],
                            capture_output=True, text=True, env=base_environment(), timeout=DEADLINE, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == b'{"substituted":1}'
