"""Issue 15, from outside the process: the plaintext's way to disk, seen through strace (which shows the
syscalls and slows the one a signal should interrupt)."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
from pathlib import Path

import pytest

from hostile import STRACE, backup, leftovers, needs_strace, password_file, wait_until
from terminal import base_environment, hwprobe_binary


# -- the write path ---------------------------------------------------------------------------

@needs_strace
def test_the_directory_is_synced_after_the_file_is_published(tmp_path):
    password, plaintext = "pw " + secrets.token_hex(4), b'{"v":"' + secrets.token_hex(16).encode() + b'"}'
    camera = backup(tmp_path, password, plaintext)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "vault.json"
    log = tmp_path / "strace.log"
    result = subprocess.run([STRACE, "-f", "-qq", "-y", "-o", str(log), "-e", "trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat",
                             hwprobe_binary(), "import", "--camera", camera, "--password-file", str(password_file(tmp_path, password)),
                             "--out", str(out)], capture_output=True, text=True, env=base_environment(), timeout=60)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == plaintext
    calls = [line.split(None, 1)[1] for line in log.read_text().splitlines() if " " in line]
    published = [i for i, call in enumerate(calls) if re.match(r"(rename|renameat2?|linkat?)\(", call) and "vault.json" in call]
    assert published, "\n".join(calls)
    synced_dir = [i for i, call in enumerate(calls) if re.match(rf"f(data)?sync\(\d+<{re.escape(str(out_dir))}>\)", call)]
    assert synced_dir and synced_dir[-1] > published[-1], "the directory is fsynced after the file is put in place:\n" + "\n".join(calls)
    synced_file = [i for i, call in enumerate(calls) if re.match(r"f(data)?sync\(", call) and i not in synced_dir]
    assert synced_file and synced_file[0] < published[-1], "the file is fsynced before it is put in place:\n" + "\n".join(calls)


@needs_strace
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_during_a_slow_fsync_nothing_is_left(tmp_path, sig):
    password, plaintext = "pw " + secrets.token_hex(4), b'{"v":"' + secrets.token_hex(16).encode() + b'"}'
    camera = backup(tmp_path, password, plaintext)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "vault.json"
    log = tmp_path / "strace.log"
    # Every fsync takes 3 s: the signal lands while the plaintext is on its way to disk.
    process = subprocess.Popen([STRACE, "-f", "-qq", "-o", str(log), "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=3000000",
                                hwprobe_binary(), "import", "--camera", camera, "--password-file", str(password_file(tmp_path, password)),
                                "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment())
    try:
        wait_until(lambda: "fsync(" in log.read_text() if log.exists() else False, 30, "the first fsync")
        pid = int(log.read_text().split()[0])
        os.kill(pid, sig)
        process.wait(timeout=30)
    finally:
        process.kill()
    assert leftovers(out_dir, {"vault.json"}) == [], "no temporary file may be left behind"
    assert not out.exists() or (out.read_bytes() == plaintext and (out.stat().st_mode & 0o777) == 0o600)
