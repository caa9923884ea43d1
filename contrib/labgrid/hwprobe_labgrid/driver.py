"""HwprobeDriver: hwprobe commands on the bench host, their JSON back on the client.

The command runs where the bench's resource is: on this host for an HwprobeBench, on the
exporter host for a NetworkHwprobeBench, through the resource's `wrap_command` (labgrid's SSH
connection to that host, shared by every command of the session). Report files hwprobe writes
there (`--report junit:FILE`) are fetched back over the same connection.

Exit codes follow hwprobe's contract (`docs/cli.md`, "Exit codes"): 0 done, 1 the flow or a
check failed, 2 usage, 3 device or permission problem, 4 wrong password, 5 damaged backup, 130
cancelled. `run` raises for anything but 0; `check` returns an outcome for 0 and 1 (a failed check
is a result, not an error) and raises HwprobeDeviceError for 3.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import attr
from labgrid.driver.common import Driver
from labgrid.driver.exception import ExecutionError
from labgrid.factory import target_factory
from labgrid.resource.common import NetworkResource
from labgrid.step import step
from labgrid.util.ssh import sshmanager

from .resource import checked_host

EXIT_MEANINGS = {
    0: "done",
    1: "failed",
    2: "usage error",
    3: "device or permission problem",
    4: "wrong password",
    5: "damaged or unsupported backup",
    130: "cancelled",
}

REPORT_SUFFIXES = {"junit": ".xml", "tap": ".tap"}


class HwprobeError(Exception):
    """hwprobe ended with an exit code the call does not accept (or did not end in time).

    Attributes: exit_code (None for a timeout or a broken transport), kind and message (from
    hwprobe's `{"error": {"kind", "message"}}` when it printed one), result (the JSON object, if
    any), stderr (what hwprobe printed there), command (the argv run on the bench host).
    """

    def __init__(self, command, exit_code, *, result=None, stderr="", kind=None, message=None, reports=None):
        self.command = list(command)
        self.exit_code = exit_code
        self.result = result
        self.stderr = stderr or ""
        error = (result or {}).get("error") if isinstance(result, dict) else None
        self.kind = kind or (error or {}).get("kind")
        self.message = message or (error or {}).get("message")
        self.reports = reports or {}
        meaning = EXIT_MEANINGS.get(exit_code, "unexpected exit") if exit_code is not None else "no exit"
        summary = f"{shlex.join(self.command)}: exit {exit_code} ({meaning})"
        if self.kind or self.message:
            summary += f": {self.kind or 'error'}: {self.message or ''}".rstrip(": ")
        tail = "\n".join(self.stderr.strip().splitlines()[-20:])
        super().__init__(summary + (f"\n--- stderr ---\n{tail}" if tail else ""))


class HwprobeFailed(HwprobeError):
    """Exit 1: the flow ended in failure (or, for `check`, a check failed)."""


class HwprobeUsageError(HwprobeError):
    """Exit 2: hwprobe refused the arguments."""


class HwprobeDeviceError(HwprobeError):
    """Exit 3: the device was not found, could not be connected, or is not permitted."""


class HwprobeTransportError(HwprobeError):
    """The command did not get to hwprobe or back: SSH failed, the output was not JSON, a timeout."""


_ERRORS_BY_EXIT = {1: HwprobeFailed, 2: HwprobeUsageError, 3: HwprobeDeviceError}


@attr.s(frozen=True)
class CheckOutcome:
    """What `HwprobeDriver.check` returns.

    passed is True exactly when hwprobe exited 0 (no check failed); summary is hwprobe's `--json`
    object (`address`, `profile`, `passed`, `failed`, `skipped`, `checks`); reports maps each
    requested format (`junit`, `tap`) to the report file fetched to this host.
    """

    exit_code = attr.ib()
    summary = attr.ib()
    reports = attr.ib()
    stderr = attr.ib(default="")

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def failed_checks(self) -> list:
        return [c for c in self.summary.get("checks", []) if c.get("result") == "fail"]


@target_factory.reg_driver
@attr.s(eq=False)
class HwprobeDriver(Driver):
    """Runs hwprobe on the bench host.

    Bindings:
        bench: an HwprobeBench (this host) or a NetworkHwprobeBench (an exporter host)
    """

    bindings = {"bench": {"HwprobeBench", "NetworkHwprobeBench"}}

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.version = None

    def on_activate(self):
        # One round trip that proves the binary runs where the bench is (and opens the SSH
        # connection every later command reuses).
        completed = self._execute([self._binary(), "--version"], timeout=30)
        if completed.returncode != 0:
            raise HwprobeTransportError([self._binary(), "--version"], completed.returncode, stderr=completed.stderr)
        self.version = completed.stdout.strip()

    def on_deactivate(self):
        self.version = None

    # -- commands -------------------------------------------------------------------------------

    @Driver.check_active
    @step(title="hwprobe", args=["args"])
    def run(self, *args, timeout=None) -> dict:
        """Runs `hwprobe ARGS --json` on the bench host and returns its JSON object.

        Raises HwprobeFailed / HwprobeUsageError / HwprobeDeviceError / HwprobeError for exit
        1 / 2 / 3 / others (with hwprobe's error kind and message and its stderr), and
        HwprobeTransportError when there was no JSON or the command timed out.
        """
        exit_code, result, stderr, argv = self._run_json(list(args), timeout)
        if exit_code != 0:
            raise _ERRORS_BY_EXIT.get(exit_code, HwprobeError)(argv, exit_code, result=result, stderr=stderr)
        return result

    @Driver.check_active
    @step(title="hwprobe_list", args=["scan_seconds"])
    def list(self, scan_seconds=3, *, timeout=None) -> dict:
        """`hwprobe list` on the bench host with its BLE scan on the bench's controller."""
        return self.run("list", "--hci", self.bench.controller, "--scan-seconds", _number(scan_seconds), timeout=timeout)

    @Driver.check_active
    @step(title="hwprobe_gatt", args=["address"])
    def gatt(self, address, *extra, timeout=None) -> dict:
        """`hwprobe gatt` of one peripheral seen by the bench's controller."""
        return self.run("gatt", "--hci", self.bench.controller, address, *extra, timeout=timeout)

    @Driver.check_active
    @step(title="hwprobe_check", args=["address", "profile"])
    def check(self, address=None, profile=None, *, reports=("junit",), into=None, timeout=None) -> CheckOutcome:
        """Runs `hwprobe check` against one peripheral and fetches its reports to this host.

        Args:
            address: the peripheral (None: the first device hwprobe finds)
            profile: `mirror-v1`, `wss`, `bcs` (None: the profile of the driver that claims it)
            reports: formats to write and fetch (`junit`, `tap`)
            into: the local directory the reports are fetched into (None: a new temporary one)

        Returns a CheckOutcome for exit 0 (all passed) and exit 1 (a check failed). Raises
        HwprobeDeviceError for exit 3 (not found or not connected; the reports written up to then
        are fetched and in its `reports`), HwprobeError for anything else.
        """
        unknown = [r for r in reports if r not in REPORT_SUFFIXES]
        if unknown:
            raise ValueError(f"unknown report formats {unknown} (known: {', '.join(REPORT_SUFFIXES)})")
        local_dir = Path(into) if into is not None else Path(tempfile.mkdtemp(prefix="hwprobe-check-"))
        local_dir.mkdir(parents=True, exist_ok=True)
        remote_dir = self._remote_tempdir()
        try:
            stem = _file_stem(address, profile)
            remote = {fmt: f"{remote_dir}/{stem}{REPORT_SUFFIXES[fmt]}" for fmt in reports}
            args = ["check", "--hci", self.bench.controller]
            if address:
                args.append(address)
            if profile:
                args += ["--profile", profile]
            for fmt, path in remote.items():
                args += ["--report", f"{fmt}:{path}"]
            exit_code, result, stderr, argv = self._run_json(args, timeout)
            fetched = {}
            for fmt, path in remote.items():
                destination = local_dir / Path(path).name
                if self._fetch(path, destination):
                    fetched[fmt] = destination
            if exit_code in (0, 1):
                missing = [fmt for fmt in reports if fmt not in fetched]
                if missing:
                    raise HwprobeTransportError(argv, exit_code, result=result, stderr=stderr,
                                                message=f"hwprobe wrote no {', '.join(missing)} report")
                return CheckOutcome(exit_code=exit_code, summary=result, reports=fetched, stderr=stderr)
            raise _ERRORS_BY_EXIT.get(exit_code, HwprobeError)(argv, exit_code, result=result, stderr=stderr,
                                                                reports=fetched)
        finally:
            try:
                self._execute(["rm", "-rf", "--", remote_dir], timeout=30)
            except HwprobeTransportError as error:  # not to hide what happened before
                self.logger.warning("could not remove %s on the bench host: %s", remote_dir, error)

    # -- plumbing -------------------------------------------------------------------------------

    def _binary(self) -> str:
        return self.bench.binary

    def _timeout(self, timeout) -> float:
        return float(timeout) if timeout is not None else float(self.bench.timeout)

    def _execute(self, argv, timeout) -> subprocess.CompletedProcess:
        seconds = self._timeout(timeout)
        remote = isinstance(self.bench, NetworkResource)
        wrapped = argv
        if remote:
            try:
                checked_host(self._ssh_host())
            except ValueError as error:
                raise HwprobeTransportError(argv, None, kind="ssh", message=str(error)) from None
            # The deadline is kept on the bench host too: killing the local ssh alone would leave
            # the remote hwprobe holding the controller. coreutils' timeout sends SIGTERM at the
            # deadline (hwprobe then gives the controller back and writes its reports) and SIGKILL
            # 5 s later; the local deadline comes after both, for an ssh that hangs.
            wrapped = ["timeout", "--kill-after=5", f"{seconds:g}", *argv]
        try:
            command = self.bench.wrap_command(wrapped)  # for a NetworkHwprobeBench: connects once
        except ExecutionError as error:
            raise HwprobeTransportError(argv, None, kind="ssh", message=f"no SSH connection to {self._ssh_host()}: {error.msg}") from error
        self.logger.debug("running %s", shlex.join(command))
        try:
            completed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                       errors="replace", timeout=seconds + 15 if remote else seconds)
        except subprocess.TimeoutExpired as expired:
            stderr = expired.stderr.decode("utf-8", "replace") if isinstance(expired.stderr, bytes) else (expired.stderr or "")
            raise HwprobeTransportError(argv, None, stderr=stderr, kind="timedOut",
                                        message=f"no exit within {seconds:g} s") from None
        if remote and completed.returncode in (124, 137):
            # timeout(1)'s own exit codes: the remote hwprobe outran its deadline and was stopped.
            raise HwprobeTransportError(argv, None, stderr=completed.stderr, kind="timedOut",
                                        message=f"no exit within {seconds:g} s (stopped on the bench host)")
        if completed.returncode == 255 and isinstance(self.bench, NetworkResource):
            # ssh's own failure (hwprobe never exits 255).
            raise HwprobeTransportError(argv, 255, stderr=completed.stderr, kind="ssh",
                                        message=f"could not run on {self.bench.host}")
        return completed

    def _run_json(self, args, timeout):
        argv = [self._binary(), *args]
        if "--json" not in args:
            argv.append("--json")
        completed = self._execute(argv, timeout)
        try:
            result = json.loads(completed.stdout)
        except json.JSONDecodeError:
            raise HwprobeTransportError(argv, completed.returncode, stderr=completed.stderr, kind="output",
                                        message=f"stdout is not one JSON object: {completed.stdout[:200]!r}") from None
        return completed.returncode, result, completed.stderr, argv

    def _remote_tempdir(self) -> str:
        completed = self._execute(["mktemp", "-d", "-t", "hwprobe-labgrid.XXXXXXXX"], timeout=30)
        path = completed.stdout.strip()
        if completed.returncode != 0 or not path.startswith("/"):
            raise HwprobeTransportError(["mktemp", "-d"], completed.returncode, stderr=completed.stderr,
                                        message="no temporary directory on the bench host")
        return path

    def _ssh_host(self) -> str:
        host = self.bench.host
        extra = getattr(self.bench, "extra", None) or {}
        if extra.get("proxy_required"):
            host = extra.get("proxy")
        return host

    def _fetch(self, remote_path: str, destination: Path) -> bool:
        """Copies one file from the bench host; False when hwprobe did not write it."""
        exists = self._execute(["test", "-f", remote_path], timeout=30)
        if exists.returncode != 0:
            return False
        if isinstance(self.bench, NetworkResource):
            sshmanager.get_file(self._ssh_host(), remote_path, str(destination))
        else:
            shutil.copyfile(remote_path, destination)
        return True


def _number(value) -> str:
    return f"{float(value):g}"


def _file_stem(address, profile) -> str:
    raw = "-".join(part for part in ("check", profile, address) if part)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)


__all__ = [
    "CheckOutcome",
    "HwprobeDeviceError",
    "HwprobeDriver",
    "HwprobeError",
    "HwprobeFailed",
    "HwprobeTransportError",
    "HwprobeUsageError",
]
