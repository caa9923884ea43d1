"""What the hardening tests (issue 15) share: strace, another process's memory, VB1 videos."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import pytest

import vb1video

STRACE = "/usr/bin/strace"
needs_strace = pytest.mark.skipif(not os.access(STRACE, os.X_OK), reason="strace is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="reads another process's memory and drops to nobody: needs root")


def memory_contains(pid: int, needles: dict[str, bytes]) -> set[str]:
    """Which of `needles` appear anywhere in the writable memory of `pid` (heap, stacks,
    anonymous maps: where a copy would linger)."""
    found: set[str] = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "w" not in fields[1] or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]")):
                continue
            address = start
            tail = b""
            while address < end:
                size = min(1 << 22, end - address)
                try:
                    mem.seek(address)
                    chunk = mem.read(size)
                except OSError:
                    break
                data = tail + chunk
                for name, needle in needles.items():
                    if needle in data:
                        found.add(name)
                tail = data[-64:]
                address += size
    return found


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.01)  # polling another process, not making a test pass


def backup(tmp_path: Path, password: str, plaintext: bytes, name: str = "backup.y4m", **parameters) -> str:
    path = vb1video.backup_video(tmp_path / name, plaintext, password, **parameters)
    return f"file:{path}?pace=max"


def secret_pair() -> tuple[str, bytes]:
    """A fresh password and a plaintext, random enough that finding either anywhere means it
    came from this run."""
    return "pw-" + secrets.token_hex(12), b'{"items":[{"secret":"' + secrets.token_hex(24).encode() + b'"}]}'


def password_file(tmp_path: Path, password: str) -> Path:
    path = tmp_path / "password"
    path.write_text(password + "\n")
    return path


def leftovers(directory: Path, allowed: set[str]) -> list[str]:
    return sorted(set(os.listdir(directory)) - allowed)
