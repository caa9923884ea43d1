"""Runs hwprobe the way a person does: in a pseudo-terminal of a given size, with keys typed and
signals sent, and the screen read back through a VT100 emulator (pyte).

A test asserts what a person would see: the focused action, the key hints, the result line, no
scrolled-off garbage after a resize, and (through `stty` in the same terminal afterwards) that the
terminal's modes were put back.

Nothing here sleeps to make a test pass: every wait is for something to appear on the screen (or
the process to end), with a deadline, and a timeout fails with the screen as it stood.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pexpect
import pyte

REPO = Path(__file__).resolve().parents[2]

KEYS = {
    "up": "\x1b[A",
    "down": "\x1b[B",
    "right": "\x1b[C",
    "left": "\x1b[D",
    "tab": "\t",
    "shift-tab": "\x1b[Z",
    "enter": "\r",
    "esc": "\x1b",
    "backspace": "\x7f",
    "ctrl-c": "\x03",
    "ctrl-d": "\x04",
    "ctrl-u": "\x15",
    "ctrl-z": "\x1a",
    "ctrl-backslash": "\x1c",
}


def hwprobe_binary() -> str:
    path = os.environ.get("HWPROBE") or str(REPO / ".build" / "debug" / "hwprobe")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{path} is not built: run `swift build` first (or set HWPROBE)")
    return path


def base_environment(**extra: str) -> dict:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        # The bench runs several times faster than life so a whole scan takes seconds.
        "HWPROBE_SIM_SPEED": "8",
    }
    env.update(extra)
    return env


class Timeout(AssertionError):
    pass


class Terminal:
    """One program in a pty, with its screen emulated."""

    def __init__(self, argv: list[str], cols: int = 100, rows: int = 30, env: dict | None = None, cwd: str | None = None):
        self.cols, self.rows = cols, rows
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.output = bytearray()
        self.child = pexpect.spawn(argv[0], argv[1:], dimensions=(rows, cols), env=env or base_environment(),
                                   cwd=cwd, echo=True)
        self.exit_status: int | None = None
        self.signal_status: int | None = None

    # -- reading ------------------------------------------------------------------------------

    def pump(self, timeout: float = 0.05) -> bool:
        """Feeds what the program wrote to the emulator; False once it has exited."""
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.output += data
        self.stream.feed(data)
        return True

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines())

    def dump(self) -> str:
        return "\n".join(f"{i + 1:2}|{line}" for i, line in enumerate(self.lines()))

    def wait_for(self, what, timeout: float = 20.0):
        """Until `what` (a string on the screen, a regex, or a predicate of this terminal) holds."""
        if isinstance(what, str):
            predicate = lambda t: what in t.text()
        elif isinstance(what, re.Pattern):
            predicate = lambda t: what.search(t.text()) is not None
        else:
            predicate = what
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self):
                return self
            if time.monotonic() > deadline:
                raise Timeout(f"waited {timeout} s for {what!r}; the screen:\n{self.dump()}")
            if not self.pump():
                # Gone: one last look at what it left on the screen.
                if predicate(self):
                    return self
                raise Timeout(f"the program ended while waiting for {what!r}; the screen:\n{self.dump()}")

    def focused(self) -> str | None:
        """The focused action (`[▸Confirm◂]`) or list row (`▸ 2  Mirror 0B17`)."""
        match = re.search(r"\[▸(.+?)◂\]", self.text())
        if match:
            return match.group(1)
        match = re.search(r"▸ \d+\s+(.+?)(\s{2,}|$)", self.text(), re.M)
        return match.group(1) if match else None

    def hints(self) -> str:
        """The key-hint line: the last row with anything on it."""
        for line in reversed(self.lines()):
            if line.strip():
                return line.strip()
        return ""

    # -- writing ------------------------------------------------------------------------------

    def press(self, *keys: str):
        for key in keys:
            self.child.send(KEYS.get(key, key))
        return self

    def type(self, text: str):
        self.child.send(text)
        return self

    def resize(self, cols: int, rows: int):
        """Like dragging the window: the kernel sends SIGWINCH to the program."""
        self.cols, self.rows = cols, rows
        self.screen.resize(rows, cols)
        self.child.setwinsize(rows, cols)
        return self

    def kill(self, sig: int):
        self.child.kill(sig)
        return self

    def wait_exit(self, timeout: float = 20.0) -> int:
        """The exit code (128 + N when a signal ended it), once the program has ended."""
        deadline = time.monotonic() + timeout
        while self.pump():
            if time.monotonic() > deadline:
                raise Timeout(f"still running after {timeout} s; the screen:\n{self.dump()}")
        self.child.close()
        self.exit_status, self.signal_status = self.child.exitstatus, self.child.signalstatus
        return self.exit_status if self.exit_status is not None else 128 + (self.signal_status or 0)

    def close(self):
        if self.child.isalive():
            self.child.kill(signal.SIGKILL)
        self.child.close(force=True)


class ShellTerminal(Terminal):
    """hwprobe run by bash in the pty, then `stty -a` in the same terminal, so a test sees the
    modes hwprobe left behind. Interactive (`job_control=True`) for Ctrl-Z and `fg`."""

    PROMPT = "hwprobe-test$ "

    def __init__(self, args: list[str], cols: int = 100, rows: int = 30, env: dict | None = None, job_control: bool = False):
        self.binary = hwprobe_binary()
        self.job_control = job_control
        env = env or base_environment()
        if job_control:
            env = dict(env, PS1=self.PROMPT, PROMPT_COMMAND="")
            super().__init__(["/bin/bash", "--norc", "--noprofile", "-i"], cols, rows, env)
            self.wait_for(lambda t: self.PROMPT in t.output.decode("utf-8", "replace"), timeout=10)
            self.type(self.command_line(args) + "\r")
        else:
            script = ('stty -a; printf "STTY-BEFORE\\n"; "$@"; code=$?; printf "\\nEXIT=%s\\n" "$code"; stty -a; '
                      'printf "STTY-END\\n"')
            super().__init__(["/bin/bash", "-c", script, "bash", self.binary] + args, cols, rows, env)

    def command_line(self, args: list[str]) -> str:
        quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in [self.binary] + args)
        return (f'stty -a; printf "STTY-BEFORE\\n"; {quoted}; code=$?; printf "\\nEXIT=%s\\n" "$code"; stty -a; '
                'printf "STTY-END\\n"')

    def hwprobe_pid(self) -> int:
        """The hwprobe process under the shell (for signals sent to it alone)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for task in Path(f"/proc/{self.child.pid}/task").iterdir():
                children = (task / "children").read_text().split()
                for child in children:
                    try:
                        if os.readlink(f"/proc/{child}/exe") == os.path.realpath(self.binary):
                            return int(child)
                    except OSError:
                        pass
            self.pump()
        raise Timeout("hwprobe did not start under the shell")

    def signal_hwprobe(self, sig: int):
        os.kill(self.hwprobe_pid(), sig)
        return self

    def finish(self, timeout: float = 20.0) -> tuple[int, str]:
        """hwprobe's exit code and `stty -a` as the shell saw it afterwards."""
        pattern = re.compile(r"EXIT=(\d+)\s*\n(.*?)STTY-END", re.S)
        deadline = time.monotonic() + timeout
        while True:
            # The typed command line echoes the words too; only the output after it counts.
            text = self.output.decode("utf-8", "replace").replace("\r", "")
            match = None
            for match in pattern.finditer(text):
                pass
            if match and "speed" in match.group(2):
                before = re.findall(r"(speed [^\n]*\n.*?)STTY-BEFORE", text, re.S)
                self.modes_before = before[-1] if before else None
                return int(match.group(1)), match.group(2)
            if time.monotonic() > deadline:
                raise Timeout(f"no exit status and stty listing within {timeout} s; the screen:\n{self.dump()}")
            if not self.pump():
                raise Timeout(f"the shell ended without a status; output:\n{text[-2000:]}")


def stty_flags(listing: str) -> set[str]:
    """The words of `stty -a` (flags appear as `echo` or `-echo`)."""
    listing = re.sub(r"rows \d+; columns \d+;", "", listing)  # the size is the window's, not a mode
    return set(re.findall(r"(?<![\w-])-?[a-z0-9]+(?![\w=])", listing))


def assert_sane_modes(listing: str, before: str | None = None):
    """The terminal is as usable as a shell needs it, and (given the listing from before hwprobe
    ran) exactly as it was."""
    flags = stty_flags(listing)
    if before is not None:
        assert flags == stty_flags(before), f"modes changed: before\n{before}\nafter\n{listing}"
    assert "echo" in flags and "-echo" not in flags, f"echo left off:\n{listing}"
    assert "icanon" in flags and "-icanon" not in flags, f"line editing left off:\n{listing}"
    assert "isig" in flags and "-isig" not in flags, f"signals from keys left off:\n{listing}"
    assert "icrnl" in flags and "-icrnl" not in flags, f"Return no longer ends a line:\n{listing}"
