"""The import soak through the real command (issue 15, item 5).

Each run starts the built `hwprobe import` process the way it is really used: in a pseudo-terminal
(pexpect + pyte, as the Tests/Terminal tests do) where a person would type the password, with
`--password-file` where a script would run it. Each run carries one fault, picked at random from
FAULTS. After every run, whatever the fault:

- the exit code is one the contract (docs/cli.md) gives for that case;
- nothing is left behind: the output directory holds only what the run may leave (no temporary,
  hidden or partial file, including the O_EXCL fallback's `.tmp` names), and the run's working
  directory stays empty;
- `--out` is absent, untouched (same inode, bytes and mode as before the run) or complete (the
  whole plaintext, a regular file of mode 0600, one link), whichever the fault allows.

It prints one line per run and a table of fault × runs × outcome, and exits 1 if any run broke a
rule. Full disk and read-only directories are small tmpfs mounts (root only); without the right to
mount, those faults are reported as skipped rather than imitated.

    soak_import.py [--runs N] [--seed S] [--only PREFIX] [--keep]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import secrets
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vb1video  # noqa: E402
from terminal import ShellTerminal, Timeout, base_environment, hwprobe_binary  # noqa: E402

SIM_PASSWORD = "correct horse battery staple"  # the simulated bench's backup (DemoCommand.password)

# Exit codes from the contract.
OK, USAGE, DEVICE, WRONG, DAMAGED, CANCELLED = 0, 2, 3, 4, 5, 130
SIGTERM_EXIT, SIGKILL_EXIT = 128 + signal.SIGTERM, 128 + signal.SIGKILL


@dataclass
class Result:
    code: int
    out_state: str          # absent | untouched | complete | special-intact | <what was wrong>
    leftovers: list[str] = field(default_factory=list)
    note: str = ""


class Materials:
    """What every run shares: the videos, the passwords, the plaintexts, the mounts."""

    def __init__(self, root: Path):
        self.root = root
        self.password = "pw-" + secrets.token_hex(8)
        self.plaintext = b'{"items":[{"secret":"' + secrets.token_hex(32).encode() + b'"}]}'
        videos = root / "videos"
        videos.mkdir()
        quick = vb1video.backup_video(videos / "quick.y4m", self.plaintext, self.password)
        self.quick = f"file:{quick}?pace=max"
        # Played at its own pace (10 frames a second, 12 frames): a run lasts over a second, so
        # a signal at a random moment can land while scanning, deriving or writing.
        paced = vb1video.backup_video(videos / "paced.y4m", self.plaintext, self.password, count=6, log_n=14)
        self.paced = f"file:{paced}"
        hostile = vb1video.backup_video(videos / "hostile.y4m", b"{}", "x", log_n=20, r=8, p=16, encrypt=False)
        self.hostile = f"file:{hostile}?pace=max"
        self.password_file = root / "password"
        self.password_file.write_text(self.password + "\n")
        self.wrong_file = root / "wrong"
        self.wrong_file.write_text("not " + self.password + "\n")
        self.empty_file = root / "empty"
        self.empty_file.write_text("\n")
        self.sim_plaintext: bytes | None = None
        self.strace = STRACE if os.access(STRACE, os.X_OK) else None
        self.mounts: list[Path] = []
        self.full_disk = self._mount("full", "size=64k")
        if self.full_disk:
            self._fill(self.full_disk)
        self.read_only = self._mount("ro", "size=64k")
        if self.read_only and subprocess.run(["mount", "-o", "remount,ro", str(self.read_only)], capture_output=True).returncode != 0:
            self.read_only = None
        # The simulated bench's vault, as a plain run writes it: what "complete" means for sim: runs.
        reference = root / "sim-reference.json"
        result = subprocess.run([hwprobe_binary(), "import", "--camera", "sim:", "--password-file", "-", "--out", str(reference)],
                                input=(SIM_PASSWORD + "\n").encode(), capture_output=True, env=base_environment(), timeout=120)
        if result.returncode != 0:
            raise SystemExit(f"the reference import from sim: failed ({result.returncode}): {result.stderr.decode()[-500:]}")
        self.sim_plaintext = reference.read_bytes()
        # How long an unfaulted paced run takes, so "a random moment" covers the whole run.
        started = time.monotonic()
        probe = root / "paced-reference.json"
        result = subprocess.run([hwprobe_binary(), "import", "--camera", self.paced, "--password-file", str(self.password_file),
                                 "--out", str(probe)], capture_output=True, env=base_environment(), timeout=120)
        if result.returncode != 0 or probe.read_bytes() != self.plaintext:
            raise SystemExit(f"the paced reference import failed ({result.returncode}): {result.stderr.decode()[-500:]}")
        self.paced_seconds = time.monotonic() - started

    def _mount(self, name: str, options: str) -> Path | None:
        point = self.root / name
        point.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", options + ",mode=0755", "tmpfs", str(point)], capture_output=True).returncode != 0:
            return None
        self.mounts.append(point)
        return point

    @staticmethod
    def _fill(point: Path):
        """Every block taken: the next write there fails with ENOSPC."""
        fd = os.open(point / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        try:
            os.write(fd, b"\0")
            raise SystemExit(f"{point} still takes bytes after filling")
        except OSError:
            pass
        finally:
            os.close(fd)

    def close(self):
        for point in reversed(self.mounts):
            subprocess.run(["umount", str(point)], capture_output=True)


# -- checking a run ---------------------------------------------------------------------------

def snapshot(path: Path):
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    content = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
    link = os.readlink(path) if stat.S_ISLNK(info.st_mode) else None
    return (info.st_ino, info.st_mode, info.st_rdev, info.st_nlink, content, link)


def out_state(path: Path, before, plaintext: bytes) -> str:
    now = snapshot(path)
    if now is None:
        return "absent"
    if before is not None and now == before:
        return "untouched"
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        return f"replaced by mode {oct(info.st_mode)}"
    if stat.S_IMODE(info.st_mode) != 0o600:
        return f"mode {oct(stat.S_IMODE(info.st_mode))}"
    if info.st_nlink != 1:
        return f"{info.st_nlink} links"
    if now[4] != plaintext:
        return f"partial ({len(now[4])} of {len(plaintext)} bytes)"
    return "complete"


def leftovers(directory: Path, allowed: set[str]) -> list[str]:
    try:
        return sorted(set(os.listdir(directory)) - allowed)
    except FileNotFoundError:
        return []


# -- the faults -------------------------------------------------------------------------------

class Run:
    """One run's scratch: an output directory, a working directory, the --out path."""

    def __init__(self, materials: Materials, number: int, directory: Path | None = None, name: str = "vault.json"):
        self.m = materials
        self.scratch = materials.root / f"run-{number}"
        self.scratch.mkdir()
        self.cwd = self.scratch / "cwd"
        self.cwd.mkdir()
        self.directory = directory or (self.scratch / "out")
        self.directory.mkdir(exist_ok=True)
        self.out = self.directory / name
        self.allowed = {name} | set(os.listdir(self.directory))

    def plain(self, args: list[str], stdin: bytes | None = None, timeout: float = 60) -> int:
        result = subprocess.run([hwprobe_binary(), "import"] + args, input=stdin, capture_output=True, env=base_environment(),
                                cwd=self.cwd, timeout=timeout)
        self.stderr = result.stderr.decode(errors="replace")
        return result.returncode

    def spawn(self, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen([hwprobe_binary(), "import"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=base_environment(), cwd=self.cwd)

    def check(self, code: int, before, plaintext: bytes) -> Result:
        state = out_state(self.out, before, plaintext)
        left = [f"{self.directory.name}/{x}" for x in leftovers(self.directory, self.allowed)]
        left += [f"cwd/{x}" for x in leftovers(self.cwd, set())]
        return Result(code, state, left)


def file_ok(m: Materials, run: Run, rng: random.Random) -> Result:
    code = run.plain(["--camera", m.quick, "--password-file", str(m.password_file), "--out", str(run.out)])
    return run.check(code, None, m.plaintext)


def file_force_existing(m, run, rng):
    run.out.write_bytes(b"an older vault")
    os.chmod(run.out, 0o644)
    before = snapshot(run.out)
    code = run.plain(["--camera", m.quick, "--password-file", str(m.password_file), "--out", str(run.out), "--force"])
    return run.check(code, before, m.plaintext)


def file_existing_without_force(m, run, rng):
    run.out.write_bytes(b"an older vault")
    before = snapshot(run.out)
    code = run.plain(["--camera", m.quick, "--password-file", str(m.password_file), "--out", str(run.out)])
    return run.check(code, before, m.plaintext)


def file_wrong_password(m, run, rng):
    code = run.plain(["--camera", m.quick, "--password-file", str(m.wrong_file), "--out", str(run.out)])
    return run.check(code, None, m.plaintext)


def file_empty_password(m, run, rng):
    source = rng.choice(["file", "stdin"])
    if source == "file":
        code = run.plain(["--camera", m.quick, "--password-file", str(m.empty_file), "--out", str(run.out)])
    else:
        code = run.plain(["--camera", m.quick, "--password-file", "-", "--out", str(run.out)], stdin=b"\n")
    return run.check(code, None, m.plaintext)


def file_hostile_kdf(m, run, rng):
    extra = rng.choice([[], ["--json"]])
    started = time.monotonic()
    code = run.plain(["--camera", m.hostile, "--password-file", str(m.password_file), "--out", str(run.out)] + extra, timeout=30)
    result = run.check(code, None, b"{}")
    if time.monotonic() - started > 15:
        result.note = f"took {time.monotonic() - started:.0f} s: the derivation ran"
    elif "--allow-slow-kdf" not in run.stderr or "about" not in run.stderr:
        result.note = "the refusal does not give the estimate and the flag"
    return result


def file_full_disk(m, run, rng):
    code = run.plain(["--camera", m.quick, "--password-file", str(m.password_file), "--out", str(run.out)])
    result = run.check(code, None, m.plaintext)
    if "no space" not in run.stderr:
        result.note = "the message does not say the disk is full"
    return result


def file_read_only(m, run, rng):
    code = run.plain(["--camera", m.quick, "--password-file", str(m.password_file), "--out", str(run.out)])
    return run.check(code, None, m.plaintext)


def file_vanished_directory(m, run, rng):
    """The output directory is removed at a random moment of a paced run."""
    process = run.spawn(["--camera", m.paced, "--password-file", str(m.password_file), "--out", str(run.out)])
    time.sleep(rng.uniform(0, m.paced_seconds))  # the random moment of the fault, not a wait for a result
    try:
        os.rmdir(run.directory)
        vanished = True
    except OSError:
        vanished = False  # the vault is already there: the run has (nearly) finished
    process.communicate(timeout=60)
    result = run.check(process.returncode, None, m.plaintext)
    result.note = "" if vanished or result.out_state == "complete" else "the directory stayed but no vault came"
    result.vanished = vanished
    return result


def special_out(kind: str):
    def fault(m, run, rng):
        target = run.out
        force = rng.choice([True, False])
        if kind == "/dev/null":
            target = Path("/dev/null")
        elif kind == "fifo":
            os.mkfifo(target)
        elif kind == "socket":
            listener = socket.socket(socket.AF_UNIX)
            listener.bind(str(target))
            listener.close()
        elif kind == "dangling symlink":
            os.symlink(run.directory / "nowhere.json", target)
        elif kind == "symlink to a file":
            (run.directory / "real.json").write_bytes(b"the file the link names")
            run.allowed.add("real.json")
            os.symlink("real.json", target)
        before = snapshot(target)
        real = snapshot(run.directory / "real.json")
        code = run.plain(["--camera", m.quick, "--password-file", str(m.password_file), "--out", str(target)] + (["--force"] if force else []))
        run.out = target
        result = run.check(code, before, m.plaintext)
        if snapshot(run.directory / "real.json") != real:
            result.out_state = "the symlink's target changed"
        if kind == "dangling symlink" and (run.directory / "nowhere.json").exists():
            result.out_state = "written through the dangling symlink"
        return result
    return fault


def file_signal(sig: int):
    def fault(m, run, rng):
        process = run.spawn(["--camera", m.paced, "--password-file", str(m.password_file), "--out", str(run.out)])
        time.sleep(rng.uniform(0, m.paced_seconds * 1.1))  # the random moment of the fault
        process.send_signal(sig)
        process.communicate(timeout=60)
        code = process.returncode if process.returncode >= 0 else 128 - process.returncode
        return run.check(code, None, m.plaintext)
    return fault


STRACE = "/usr/bin/strace"


def file_signal_while_writing(sig: int):
    """The signal lands while the plaintext is on its way to disk: every fsync is slowed by
    strace to 0.4 s, and the signal comes at a random moment from the first fsync on."""
    def fault(m, run, rng):
        log = run.scratch / "strace.log"
        process = subprocess.Popen([STRACE, "-f", "-qq", "-o", str(log), "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=400000",
                                    hwprobe_binary(), "import", "--camera", m.quick, "--password-file", str(m.password_file),
                                    "--out", str(run.out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment(), cwd=run.cwd)
        deadline = time.monotonic() + 30
        while not (log.exists() and "fsync(" in log.read_text()):
            if process.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.005)  # polling strace's log for the first fsync, not waiting for a result
        pid = int(log.read_text().split()[0]) if log.exists() and log.read_text() else process.pid
        time.sleep(rng.uniform(0, 1.0))  # the random moment: the file's fsync, the publication, the directory's fsync, after
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
        process.communicate(timeout=60)
        # strace exits with the status of the process it traced (128 + N for a signal).
        code = process.returncode if process.returncode >= 0 else 128 - process.returncode
        run.allowed.add("strace.log")
        return run.check(code, None, m.plaintext)
    return fault


def without_o_tmpfile(run: Run) -> list[str]:
    """strace in front of hwprobe, refusing O_TMPFILE in the output directory (EOPNOTSUPP, as a
    file system without it answers), so the 0600 O_EXCL named temporary is used. -P keeps the
    injection to calls on that directory; strace counts them per thread, and each use of the
    directory (the check before the camera opens, the write) is three of them: the directory,
    O_TMPFILE, the named file. So every third from the second on is an O_TMPFILE open, whichever
    thread makes both uses."""
    return [STRACE, "-f", "-qq", "-o", str(run.scratch / "strace.log"), "-P", str(run.directory), "-e", "trace=openat",
            "-e", "inject=openat:error=EOPNOTSUPP:when=2+3"]


def fallback_ok(m, run, rng):
    result = subprocess.run(without_o_tmpfile(run) + [hwprobe_binary(), "import", "--camera", m.quick, "--password-file",
                                                      str(m.password_file), "--out", str(run.out)],
                            capture_output=True, env=base_environment(), cwd=run.cwd, timeout=60)
    checked = run.check(result.returncode, None, m.plaintext)
    if ".hwprobe-tmp\"" not in (run.scratch / "strace.log").read_text():
        checked.note = "the named temporary was not used: the fault did not strike"
    return checked


def fallback_signal(sig: int):
    def fault(m, run, rng):
        process = subprocess.Popen(without_o_tmpfile(run) + [hwprobe_binary(), "import", "--camera", m.paced, "--password-file",
                                                             str(m.password_file), "--out", str(run.out)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment(), cwd=run.cwd)
        time.sleep(rng.uniform(0, m.paced_seconds * 1.1))  # the random moment of the fault
        # To hwprobe itself, not to strace: its children are hwprobe's threads' process.
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        try:
            os.kill(int(children[0]) if children else process.pid, sig)
        except (ProcessLookupError, OSError):
            pass
        process.communicate(timeout=60)
        code = process.returncode if process.returncode >= 0 else 128 - process.returncode
        return run.check(code, None, m.plaintext)
    return fault


# -- at the terminal --------------------------------------------------------------------------

def pty_run(run: Run, args: list[str], drive, plaintext: bytes, before=None) -> Result:
    t = ShellTerminal(["import"] + args + ["--out", str(run.out)], env=base_environment())
    try:
        drive(t)
        code, _ = t.finish(timeout=60)
    except Timeout as timeout:
        t.close()
        return Result(-1, "?", [], f"timed out: {str(timeout)[-300:]}")
    finally:
        t.close()
    return run.check(code, before, plaintext)


def pty_typed(first_attempt):
    """At the prompt: `first_attempt` (what goes wrong first, if anything), then the right password."""
    def fault(m, run, rng):
        def drive(t):
            t.wait_for("Enter Backup Password", timeout=30)
            first_attempt(m, t)
            t.type(m.password).press("enter")
        return pty_run(run, ["--camera", m.quick], drive, m.plaintext)
    return fault


def straight_away(m, t):
    pass


def enter_on_the_empty_field(m, t):
    t.press("enter")
    t.wait_for("Type the backup's password, then press Enter.", timeout=10)


def a_wrong_password(m, t):
    t.type("not " + m.password).press("enter")
    t.wait_for("Incorrect password", timeout=30)
    t.wait_for(lambda t: "type the password" in t.hints(), timeout=10)


def pty_cancel_mid_derivation(m, run, rng):
    how = rng.choice(["ctrl-c", "esc then esc", "sigterm"])

    def drive(t):
        t.wait_for("Enter Backup Password", timeout=60)
        # The right password: were the cancel lost, the vault would be written.
        t.type(SIM_PASSWORD).press("enter")
        t.wait_for("Decrypting", timeout=10)
        if how == "ctrl-c":
            t.press("ctrl-c")
        elif how == "sigterm":
            t.signal_hwprobe(signal.SIGTERM)
        else:
            t.press("esc")
            t.wait_for(lambda t: "type the password" in t.hints() and "Decrypting" not in t.text(), timeout=5)
            t.press("esc")
    result = pty_run(run, ["--camera", "sim:?backup=slow"], drive, m.sim_plaintext)
    result.how = how
    return result


def pty_hostile_kdf(m, run, rng):
    how = rng.choice(["cancel", "esc", "continue then esc"])

    def drive(t):
        t.wait_for("Continue", timeout=30)
        if "about" not in t.text():
            raise Timeout("the question does not give the estimate:\n" + t.dump())
        if how == "cancel":
            t.press("right")
            t.wait_for(lambda t: "Enter Cancel" in t.hints(), timeout=5)
            t.press("enter")
        elif how == "esc":
            t.press("esc")
        else:
            t.press("enter")
            t.wait_for("Enter Backup Password", timeout=10)
            t.press("esc")
    result = pty_run(run, ["--camera", m.hostile], drive, b"{}")
    result.how = how
    return result


def pty_damaged_set(m, run, rng):
    how = rng.choice(["start over", "quit"])

    def drive(t):
        t.wait_for("These codes don't fit together", timeout=30)
        if how == "quit":
            t.press("esc")
            return
        t.press("enter")
        t.wait_for("Enter Backup Password", timeout=60)
        t.type(SIM_PASSWORD).press("enter")
    result = pty_run(run, ["--camera", "sim:?backup=damaged"], drive, m.sim_plaintext)
    result.how = how
    return result


def pty_signal(sig: int):
    def fault(m, run, rng):
        moment = rng.uniform(0, m.paced_seconds * 1.2)
        t = ShellTerminal(["import", "--camera", m.paced, "--out", str(run.out)], env=base_environment())
        try:
            pid = t.hwprobe_pid()
            started = time.monotonic()
            typed = False
            # Type the password as soon as it is asked for, and signal at the chosen moment.
            while time.monotonic() - started < moment:
                t.pump(0.01)
                if not typed and "Enter Backup Password" in t.text():
                    t.type(m.password).press("enter")
                    typed = True
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
            code, _ = t.finish(timeout=60)
        except Timeout as timeout:
            return Result(-1, "?", [], f"timed out: {str(timeout)[-300:]}")
        finally:
            t.close()
        return run.check(code, None, m.plaintext)
    return fault


@dataclass
class Fault:
    label: str
    run: object
    codes: set[int]
    states: set[str]
    needs: str | None = None   # a Materials attribute that must be set (a mount, strace)
    directory: str | None = None
    control: bool = False      # no fault: the baseline the faulted runs are told apart from


FAULTS = [
    Fault("password file, right password", file_ok, {OK}, {"complete"}, control=True),
    Fault("password file, --force over a file", file_force_existing, {OK}, {"complete"}),
    Fault("existing --out without --force", file_existing_without_force, {USAGE}, {"untouched"}),
    Fault("password file, wrong password", file_wrong_password, {WRONG}, {"absent"}),
    Fault("empty password (file or stdin)", file_empty_password, {USAGE}, {"absent"}),
    Fault("hostile KDF, unattended", file_hostile_kdf, {DAMAGED}, {"absent"}),
    Fault("full disk (tmpfs)", file_full_disk, {DEVICE}, {"absent"}, needs="full_disk", directory="full_disk"),
    Fault("read-only directory (tmpfs)", file_read_only, {DEVICE}, {"absent"}, needs="read_only", directory="read_only"),
    Fault("output directory vanishes", file_vanished_directory, {OK, USAGE}, {"absent", "complete"}),
    Fault("--out /dev/null", special_out("/dev/null"), {USAGE}, {"untouched"}),
    Fault("--out a FIFO", special_out("fifo"), {USAGE}, {"untouched"}),
    Fault("--out a socket", special_out("socket"), {USAGE}, {"untouched"}),
    Fault("--out a dangling symlink", special_out("dangling symlink"), {USAGE}, {"untouched"}),
    Fault("--out a symlink to a file", special_out("symlink to a file"), {USAGE}, {"untouched"}),
    Fault("SIGTERM at a random moment", file_signal(signal.SIGTERM), {OK, SIGTERM_EXIT}, {"absent", "complete"}),
    Fault("SIGKILL at a random moment", file_signal(signal.SIGKILL), {OK, SIGKILL_EXIT}, {"absent", "complete"}),
    Fault("SIGTERM while writing (slow fsync)", file_signal_while_writing(signal.SIGTERM), {OK, SIGTERM_EXIT}, {"absent", "complete"},
          needs="strace"),
    Fault("SIGKILL while writing (slow fsync)", file_signal_while_writing(signal.SIGKILL), {OK, SIGKILL_EXIT}, {"absent", "complete"},
          needs="strace"),
    Fault("no O_TMPFILE: named-temp fallback", fallback_ok, {OK}, {"complete"}, needs="strace"),
    Fault("no O_TMPFILE: SIGTERM at a random moment", fallback_signal(signal.SIGTERM), {OK, SIGTERM_EXIT}, {"absent", "complete"},
          needs="strace"),
    Fault("pty: right password", pty_typed(straight_away), {OK}, {"complete"}, control=True),
    Fault("pty: empty password, then right", pty_typed(enter_on_the_empty_field), {OK}, {"complete"}),
    Fault("pty: wrong password, then right", pty_typed(a_wrong_password), {OK}, {"complete"}),
    Fault("pty: cancel mid-derivation", pty_cancel_mid_derivation, {CANCELLED, SIGTERM_EXIT}, {"absent"}),
    Fault("pty: hostile KDF asked, declined", pty_hostile_kdf, {CANCELLED}, {"absent"}),
    Fault("pty: damaged set", pty_damaged_set, {OK, CANCELLED}, {"absent", "complete"}),
    Fault("pty: SIGTERM at a random moment", pty_signal(signal.SIGTERM), {OK, SIGTERM_EXIT}, {"absent", "complete"}),
    Fault("pty: SIGKILL at a random moment", pty_signal(signal.SIGKILL), {OK, SIGKILL_EXIT}, {"absent", "complete"}),
]


def expected_pairs(fault: Fault, result: Result) -> bool:
    """Code and state must also agree with each other: a success wrote the whole vault, a failure nothing."""
    if result.code not in fault.codes or result.out_state not in fault.states:
        return False
    if fault.label.startswith("pty: damaged set"):
        return (result.code, result.out_state) in {(OK, "complete"), (CANCELLED, "absent")}
    if result.code == SIGKILL_EXIT:
        # Killed outright: nothing can be cleaned up, so the file is absent (never named) or, if
        # the kill came after the publication, complete; never partial (checked above).
        return True
    if OK in fault.codes and "absent" in fault.states:
        return (result.code == OK) == (result.out_state == "complete")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="faulted runs (default 300)")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--only", default=None, help="only faults whose label starts with this")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    root = Path(tempfile.mkdtemp(prefix="hwprobe-soak-import-"))
    print(f"soak-import: {options.runs} runs, seed {options.seed}, binary {hwprobe_binary()}, scratch {root}", flush=True)
    try:
        materials = Materials(root)
    except BaseException:
        for point in ("full", "ro"):
            subprocess.run(["umount", str(root / point)], capture_output=True)
        raise
    print(f"soak-import: a paced run takes {materials.paced_seconds:.2f} s; full disk "
          f"{'mounted' if materials.full_disk else 'NOT mounted (skipped)'}, read-only "
          f"{'mounted' if materials.read_only else 'NOT mounted (skipped)'}", flush=True)
    faults = [f for f in FAULTS if options.only is None or f.label.startswith(options.only)]
    table: dict[tuple[str, str], int] = collections.Counter()
    counts: dict[str, int] = collections.Counter()
    bad: list[str] = []
    started = time.monotonic()
    try:
        for number in range(1, options.runs + 1):
            fault = faults[(number - 1) % len(faults)] if number <= len(faults) else rng.choice(faults)
            if fault.needs and getattr(materials, fault.needs) is None:
                table[(fault.label, f"skipped: no {fault.needs.replace('_', ' ')} (a tmpfs mount, or strace)")] += 1
                counts[fault.label] += 1
                continue
            directory = getattr(materials, fault.directory) if fault.directory else None
            run = Run(materials, number, directory)
            # Every process of the run (the pty's shell and hwprobe too) starts in the run's cwd.
            os.chdir(run.cwd)
            began = time.monotonic()
            try:
                result = fault.run(materials, run, rng)
            except Exception as error:  # a broken run is a finding, never a crash of the soak
                result = Result(-1, "?", [], f"{type(error).__name__}: {error}")
            ok = expected_pairs(fault, result) and not result.leftovers and not result.note
            outcome = f"exit {result.code}, out {result.out_state}"
            if hasattr(result, "how"):
                outcome = f"{result.how}: {outcome}"
            if hasattr(result, "vanished"):
                outcome = ("vanished" if result.vanished else "not vanished (already written)") + f": {outcome}"
            table[(fault.label, outcome if ok else "BAD " + outcome)] += 1
            counts[fault.label] += 1
            mark = "ok " if ok else "BAD"
            extra = "; ".join(filter(None, [", ".join(result.leftovers) and "left: " + ", ".join(result.leftovers), result.note]))
            print(f"{mark} {number:4d} {fault.label}: {outcome} ({time.monotonic() - began:.1f} s){' [' + extra + ']' if extra else ''}", flush=True)
            if not ok:
                bad.append(f"run {number} {fault.label}: {outcome} {extra}")
            os.chdir(root)
            if options.keep:
                continue
            # Cleared as the run goes, except a mount's contents (the next run there reuses it).
            if directory is None:
                subprocess.run(["rm", "-rf", str(run.scratch)])
            else:
                for name in set(os.listdir(directory)) - run.allowed - {"filler"}:
                    (directory / name).unlink()
                subprocess.run(["rm", "-rf", str(run.scratch)])
    finally:
        materials.close()
        if not options.keep:
            subprocess.run(["rm", "-rf", str(root)])
    width = max(len(label) for label, _ in table) if table else 10
    print(f"\n{'fault':<{width}}  {'runs':>5}  outcome")
    for label in [f.label for f in faults]:
        rows = [(outcome, n) for (l, outcome), n in sorted(table.items()) if l == label]
        for index, (outcome, n) in enumerate(rows):
            print(f"{label if index == 0 else '':<{width}}  {n:>5}  {outcome}")
    total = sum(counts.values())
    controls = sum(n for label, n in counts.items() if any(f.control and f.label == label for f in faults))
    print(f"\n{total} runs ({total - controls} faulted, {controls} unfaulted controls) in {time.monotonic() - started:.0f} s, "
          f"{len(bad)} broke a rule")
    for line in bad:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
