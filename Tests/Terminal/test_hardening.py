"""Issue 15, from outside the process: secrets in memory (read through /proc/PID/mem while the process is
held at its last syscall or waits at the prompt), what people and scripts see, and costs
bounded before they are paid."""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import signal
import struct
import subprocess
import termios
import tempfile
import time
from pathlib import Path

import pytest

from hostile import STRACE, backup, leftovers, memory_contains, needs_root, needs_strace, password_file, secret_pair, wait_until
from terminal import assert_sane_modes, base_environment, hwprobe_binary


# -- secrets ----------------------------------------------------------------------------------

@needs_strace
@needs_root
def test_no_copy_of_the_password_or_the_plaintext_is_left_at_exit(tmp_path):
    password, plaintext = secret_pair()
    camera = backup(tmp_path, password, plaintext)
    out = tmp_path / "vault.json"
    log = tmp_path / "strace.log"
    # Held for 10 s at exit_group: everything the run did is done, its memory still there.
    process = subprocess.Popen([STRACE, "-f", "-qq", "-o", str(log), "-e", "trace=exit_group", "-e", "inject=exit_group:delay_enter=10000000",
                                hwprobe_binary(), "import", "--camera", camera, "--password-file", str(password_file(tmp_path, password)),
                                "--out", str(out), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment())
    try:
        wait_until(lambda: log.exists() and "exit_group(" in log.read_text(), 60, "hwprobe to reach exit_group")
        pid = int(log.read_text().split()[0])
        found = memory_contains(pid, {"password": password.encode(), "plaintext": plaintext[8:56]})
    finally:
        process.kill()
        process.wait()
    assert out.read_bytes() == plaintext
    assert found == set(), f"left in memory at exit: {sorted(found)}"


@needs_root
def test_a_refused_password_leaves_no_copy_in_memory(run, tmp_path):
    out = tmp_path / "vault.json"
    wrong = "wrong-" + secrets.token_hex(10)
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.type(wrong).press("enter")
    t.wait_for("Incorrect password", timeout=30)
    t.wait_for(lambda t: "type the password" in t.hints(), timeout=10)
    found = memory_contains(t.hwprobe_pid(), {"the refused password": wrong.encode()})
    t.press("esc")
    assert t.finish()[0] == 130
    assert found == set(), "the refused password is still in the process's memory"


@needs_root
def unread_bytes(pipe) -> int:
    """Bytes written into a pipe that its reader has not taken yet (FIONREAD)."""
    return struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def test_core_dumps_are_off_while_secrets_are_in_memory():
    # As nobody, so that "not dumpable" shows: /proc/PID files then belong to root.
    with tempfile.TemporaryDirectory(prefix="hwprobe-nobody-") as directory:
        os.chmod(directory, 0o777)
        out = Path(directory) / "vault.json"
        process = subprocess.Popen(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                    hwprobe_binary(), "import", "--camera", "sim:?backup=none", "--password-file", "-", "--out", str(out)],
                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=base_environment())
        try:
            process.stdin.write(b"a password\n")
            process.stdin.flush()
            pid = process.pid
            # Past the password file (the pipe drained: hwprobe has read the password, so it is in
            # memory), then scanning a camera that shows nothing.
            wait_until(lambda: unread_bytes(process.stdin) == 0, 20, "hwprobe to read the password")
            assert process.poll() is None, f"hwprobe ended with {process.returncode}"
            limits = Path(f"/proc/{pid}/limits").read_text()
            owner = os.stat(f"/proc/{pid}/environ").st_uid
        finally:
            process.kill()
            process.wait()
    core = re.search(r"Max core file size\s+(\S+)\s+(\S+)", limits)
    assert core and core.groups() == ("0", "0"), limits
    assert owner == 0, "the process is not dumpable (its /proc files belong to root, not to nobody)"


def test_no_secret_in_json_verbose_output_or_the_terminal(run, tmp_path):
    password, plaintext = secret_pair()
    needles = [password.encode(), plaintext[8:40]]
    camera = backup(tmp_path, password, plaintext)
    outputs = []
    for extra in (["--json"], ["-v"], ["-v", "--json"]):
        out = tmp_path / f"vault{len(outputs)}.json"
        result = subprocess.run([hwprobe_binary(), "import", "--camera", camera, "--password-file", str(password_file(tmp_path, password)),
                                 "--out", str(out)] + extra, capture_output=True, env=base_environment(), timeout=60)
        assert result.returncode == 0, result.stderr
        outputs += [result.stdout, result.stderr]
    # A wrong password first, then the right one, at the terminal with -v.
    out = tmp_path / "vault-pty.json"
    t = run(["import", "--camera", camera, "--out", str(out), "-v"], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.type("not " + password).press("enter")
    t.wait_for("Incorrect password", timeout=30)
    t.wait_for(lambda t: "type the password" in t.hints(), timeout=10)
    t.type(password).press("enter")
    assert t.finish(timeout=30)[0] == 0
    outputs.append(bytes(t.output))
    for output in outputs:
        for needle in needles:
            assert needle not in output


@needs_strace
def test_no_secret_in_crash_output(tmp_path):
    password, plaintext = secret_pair()
    camera = backup(tmp_path, password, plaintext)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "vault.json"
    env = dict(base_environment(), SWIFT_BACKTRACE="enable=yes,interactive=no")
    # A crash (SIGSEGV) at the first fsync: the key, the password and the plaintext are all in memory.
    result = subprocess.run([STRACE, "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:signal=SIGSEGV:when=1",
                             hwprobe_binary(), "import", "--camera", camera, "--password-file", str(password_file(tmp_path, password)),
                             "--out", str(out)], capture_output=True, env=env, timeout=120)
    # Swift's backtracer reports the crash (an injected signal does not fault again, so the run
    # then goes on: what matters here is what the report shows).
    assert b"Program crashed" in result.stderr, result.stderr[-2000:]
    for needle in (password.encode(), plaintext[8:40]):
        assert needle not in result.stdout + result.stderr
    assert leftovers(out_dir, {"vault.json"}) == []


# -- costs bounded before they are paid -------------------------------------------------------

HOSTILE = dict(log_n=20, r=8, p=16, encrypt=False)  # 1 GiB and ~40 s a derivation


def test_a_hostile_kdf_is_refused_unattended_with_the_estimate(tmp_path):
    camera = backup(tmp_path, "x", b"{}", **HOSTILE)
    out = tmp_path / "vault.json"
    started = time.monotonic()
    process = subprocess.Popen([hwprobe_binary(), "import", "--camera", camera, "--password-file", str(password_file(tmp_path, "x")),
                                "--out", str(out), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment())
    try:
        wait_until(lambda: os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None, 20, "hwprobe to end")
    except AssertionError:
        # Still deriving: kill it by its pid (Popen.kill would reap it, and its usage with it).
        os.kill(process.pid, signal.SIGKILL)
        raise
    finally:
        # Reaped here, with its resource usage, whichever way it ended.
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = process.stdout.read(), process.stderr.read()
    elapsed = time.monotonic() - started
    assert process.returncode == 5, stderr.decode()
    assert elapsed < 10, f"took {elapsed:.1f} s: the derivation ran"
    assert usage.ru_maxrss < 200 * 1024, f"peak resident {usage.ru_maxrss // 1024} MiB: the derivation's table was allocated"
    text = stderr.decode()
    assert "--allow-slow-kdf" in text and re.search(r"about \d+ (s|min)", text), text
    assert b'"kind" : "unsupported"' in stdout or b'"kind":"unsupported"' in stdout, stdout
    assert not out.exists()


def test_a_hostile_kdf_at_the_terminal_asks_first(run, tmp_path):
    camera = backup(tmp_path, "x", b"{}", **HOSTILE)
    out = tmp_path / "vault.json"
    t = run(["import", "--camera", camera, "--out", str(out)], shell=True)
    t.wait_for("Continue", timeout=30)
    assert re.search(r"about \d+ (s|second|min)", t.text()), t.dump()
    assert "Cancel" in t.text() and "Enter Continue" in t.hints()
    assert "Enter Backup Password" not in t.text(), "asked before the password, so nothing typed is wasted"
    t.press("right")
    t.wait_for(lambda t: "Enter Cancel" in t.hints(), timeout=5)
    t.press("enter")
    code, modes = t.finish(timeout=10)
    assert code == 130
    assert_sane_modes(modes, t.modes_before)
    assert not out.exists()


def test_a_huge_frame_claim_in_a_tiny_video_stays_small(tmp_path):
    video = tmp_path / "claim.y4m"
    video.write_bytes(b"YUV4MPEG2 W16384 H16384 F25:1 Cmono\nFRAME\n\x01\x02\x03")
    assert video.stat().st_size == 45
    process = subprocess.Popen([hwprobe_binary(), "import", "--camera", f"file:{video}", "--password-file", str(password_file(tmp_path, "x")),
                                "--out", str(tmp_path / "vault.json")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment())
    _, status, usage = os.wait4(process.pid, 0)
    stderr = process.stderr.read().decode()
    assert usage.ru_maxrss < 100 * 1024, f"peak resident {usage.ru_maxrss // 1024} MiB for a 45-byte video"
    # Refused as a bad camera file (the contract's device problem), before any frame is allocated.
    assert os.waitstatus_to_exitcode(status) == 3, stderr
    assert "16384x16384" in stderr and "more than" in stderr, stderr
