"""A whole labgrid lab on loopback, for the adapter's CI proof.

- an OpenSSH server on 127.0.0.1 with a generated host key and user key: labgrid reaches an
  exporter host over SSH, and this one is reached as `bench-loopback` through an ssh client
  config of our own (an `ssh`/`scp` pair early in PATH adds `-F` to labgrid's plain `ssh HOST`,
  in place of the `Host` entry a lab would keep in ~/.ssh/config);
- bumble mirrors (Tests/Peers/ble_peer.py, run with the peers' venv), each a controller on a TCP
  H4 port;
- `labgrid-coordinator`, `hwprobe-labgrid-exporter` publishing one HwprobeBench per mirror under
  the host name `bench-loopback`, and places made and acquired with `labgrid-client`.

Every wait has a deadline, and every process started here is stopped (by its own handle) when
the lab closes, the lab's own failures included.
"""

from __future__ import annotations

import getpass
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent  # labgrid's entry points live beside this venv's python
SSH_ALIAS = "bench-loopback"
SSH_UNREACHABLE = "bench-unreachable"
EXPORTER_NAME = "loopback"
SSHD = "/usr/sbin/sshd"


class Unavailable(Exception):
    """Something the lab needs is not on this machine (the test is skipped, saying what)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(predicate, *, seconds: float, what: str, interval: float = 0.05, process=None):
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with {process.returncode} first")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {seconds:g} s")
        time.sleep(interval)  # polling another process


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def hwprobe_binary() -> str:
    path = os.environ.get("HWPROBE") or str(REPO / ".build" / "debug" / "hwprobe")
    if not os.access(path, os.X_OK):
        raise Unavailable(f"{path} is not built (swift build --product hwprobe, or set HWPROBE)")
    return os.path.abspath(path)


def peers_python() -> str:
    path = os.environ.get("HWPROBE_PEERS_PYTHON") or str(REPO / ".venv-peers" / "bin" / "python")
    if not os.access(path, os.X_OK):
        raise Unavailable(f"no bumble venv at {path} (scripts/setup-peers makes it, or set HWPROBE_PEERS_PYTHON)")
    return path


class Lab:
    def __init__(self, root: Path):
        self.root = root
        self.processes: list[tuple[str, subprocess.Popen]] = []
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ)
        self.coordinator = None

    # -- processes ------------------------------------------------------------------------------

    def spawn(self, name: str, argv: list[str], *, stdout=None, stdin=subprocess.DEVNULL, cwd=None) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "wb")
        process = subprocess.Popen(argv, stdin=stdin, stdout=stdout if stdout is not None else log, stderr=log,
                                   env=self.env, cwd=cwd or self.root, start_new_session=True)
        log.close()
        self.processes.append((name, process))
        return process

    def close(self):
        for name, process in reversed(self.processes):
            if process.poll() is None:
                if process.stdin:
                    try:
                        process.stdin.close()  # the peers stop when their stdin closes
                    except OSError:
                        pass
                try:
                    process.send_signal(signal.SIGTERM)
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)
        self.processes.clear()

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.logs / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    # -- ssh ------------------------------------------------------------------------------------

    def start_sshd(self):
        if not os.access(SSHD, os.X_OK) or shutil.which("ssh-keygen") is None or shutil.which("ssh") is None:
            raise Unavailable(f"{SSHD} / ssh / ssh-keygen missing (Debian: openssh-server, openssh-client)")
        if not Path("/run/sshd").is_dir():
            if os.geteuid() != 0:
                raise Unavailable("sshd's privilege separation directory /run/sshd is missing and we are not root")
            Path("/run/sshd").mkdir(mode=0o755)
        ssh = self.root / "ssh"
        ssh.mkdir()
        for key in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"hwprobe-labgrid {key}",
                            "-f", str(ssh / key)], check=True, timeout=30)
        shutil.copyfile(ssh / "user_key.pub", ssh / "authorized_keys")
        host_public = (ssh / "host_key.pub").read_text().split()
        (ssh / "known_hosts").write_text(f"{SSH_ALIAS} {host_public[0]} {host_public[1]}\n")
        port = free_port()
        (ssh / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {ssh / 'host_key'}\n"
            f"AuthorizedKeysFile {ssh / 'authorized_keys'}\nPidFile none\nStrictModes no\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "PermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\nLogLevel ERROR\n")
        (ssh / "config").write_text(
            # SSH_UNREACHABLE: a host whose port nothing listens on, for the transport's failures.
            f"Host {SSH_UNREACHABLE}\n  HostName 127.0.0.1\n  Port {free_port()}\n  BatchMode yes\n"
            f"Host {SSH_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
            f"  IdentityFile {ssh / 'user_key'}\n  IdentitiesOnly yes\n  HostKeyAlias {SSH_ALIAS}\n"
            f"  UserKnownHostsFile {ssh / 'known_hosts'}\n  BatchMode yes\n")
        shims = self.root / "bin"
        shims.mkdir()
        for tool in ("ssh", "scp"):
            real = shutil.which(tool)
            shim = shims / tool
            shim.write_text(f"#!/bin/sh\nexec {real} -F {ssh / 'config'} \"$@\"\n")
            shim.chmod(0o755)
        self.env["PATH"] = f"{shims}{os.pathsep}{self.env.get('PATH', '/usr/bin:/bin')}"
        sshd = self.spawn("sshd", [SSHD, "-D", "-e", "-f", str(ssh / "sshd_config")])
        wait_until(lambda: port_open(port), seconds=15, what="sshd listening", process=sshd)
        probe = subprocess.run(["ssh", SSH_ALIAS, "true"], env=self.env, capture_output=True, text=True, timeout=30)
        if probe.returncode != 0:
            raise RuntimeError(f"ssh to {SSH_ALIAS} failed: {probe.stderr}\n{self.log_tail('sshd')}")

    # -- bumble mirrors ---------------------------------------------------------------------------

    def start_mirrors(self, mirrors: dict[str, tuple[str, ...]]) -> dict[str, dict]:
        """mirrors: name → deviations. Started together (bumble takes a few seconds to come up),
        then each one's READY line awaited; returns name → {"controller", "address"}."""
        started = {}
        for name, deviations in mirrors.items():
            argv = [peers_python(), str(REPO / "Tests" / "Peers" / "ble_peer.py"), "--profile", "mirror"]
            for deviation in deviations:
                argv += ["--deviation", deviation]
            started[name] = self.spawn(name, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        ready = {}
        for name, peer in started.items():
            line = self._ready_line(peer, name, seconds=30)
            fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
            ready[name] = {"controller": "tcp:" + fields["tcp"], "address": fields["address"]}
        return ready

    def _ready_line(self, process, name, seconds) -> str:
        deadline, buffer = time.monotonic() + seconds, b""
        while time.monotonic() < deadline:
            readable, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                break
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"{name} exited before it was ready:\n{self.log_tail(name)}")
            buffer += chunk
            for line in buffer.decode("utf-8", "replace").splitlines():
                if line.startswith("READY "):
                    return line
        raise TimeoutError(f"{name} printed no READY line within {seconds} s:\n{self.log_tail(name)}")

    # -- labgrid --------------------------------------------------------------------------------

    def start_coordinator(self):
        tool = BIN / "labgrid-coordinator"
        if not os.access(tool, os.X_OK):
            raise Unavailable(f"{tool} missing (contrib/labgrid/setup-venv installs labgrid)")
        port = free_port()
        self.coordinator = f"127.0.0.1:{port}"
        self.env["LG_COORDINATOR"] = self.coordinator
        coordinator = self.spawn("coordinator", [str(tool), "--listen", self.coordinator],
                                 cwd=self.root)
        wait_until(lambda: port_open(port), seconds=30, what="labgrid-coordinator listening", process=coordinator)

    def start_exporter(self, benches: dict[str, dict]):
        """benches: group name → {"controller", "binary"}; published as EXPORTER_NAME/GROUP/NetworkHwprobeBench."""
        config = self.root / "exporter.yaml"
        text = ""
        for group, bench in benches.items():
            text += (f"{group}:\n  location: loopback\n  HwprobeBench:\n"
                     f"    controller: '{bench['controller']}'\n    binary: '{bench['binary']}'\n")
        config.write_text(text)
        exporter = self.spawn("exporter", [str(BIN / "hwprobe-labgrid-exporter"), "--coordinator", self.coordinator,
                                           "--name", EXPORTER_NAME, "--hostname", SSH_ALIAS, str(config)])
        wanted = [f"{EXPORTER_NAME}/{group}/NetworkHwprobeBench" for group in benches]

        def published():
            # -vv lists unavailable resources too (a bench without its binary)
            listed = self.client("-vv", "resources", check=False)
            return listed.returncode == 0 and all(path in listed.stdout for path in wanted)

        try:
            wait_until(published, seconds=30, interval=0.2, what="the exporter's benches on the coordinator", process=exporter)
        except Exception as error:
            raise RuntimeError(f"{error}\n{self.log_tail('exporter')}") from error

    def client(self, *args: str, check=True, timeout=30) -> subprocess.CompletedProcess:
        completed = subprocess.run([str(BIN / "labgrid-client"), *args], env=self.env, capture_output=True,
                                   text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if check and completed.returncode != 0:
            raise RuntimeError(f"labgrid-client {' '.join(args)}: exit {completed.returncode}\n{completed.stderr}")
        return completed

    def make_place(self, place: str, group: str):
        self.client("-p", place, "create")
        self.client("-p", place, "add-match", f"{EXPORTER_NAME}/{group}/NetworkHwprobeBench")
        self.client("-p", place, "acquire")
