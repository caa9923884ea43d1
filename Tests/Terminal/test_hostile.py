"""hwprobe against a hostile controller (Tests/Peers/hostile_controller.py): the bounds of the
host stack, seen from outside the process as a person would see them — memory, time, words."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hostile import wait_until
from terminal import REPO, base_environment, hwprobe_binary

PEER = REPO / "Tests" / "Peers" / "hostile_controller.py"


def start(mode):
    peer = subprocess.Popen([sys.executable, str(PEER), "--mode", mode], stdout=subprocess.PIPE, text=True)
    line = peer.stdout.readline()
    assert line.startswith("READY tcp="), line
    return peer, line.split("=", 1)[1].strip()


def test_a_flood_of_advertising_reports_keeps_hwprobe_small(tmp_path):
    peer, address = start("flood-adv")
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen([hwprobe_binary(), "list", "--hci", f"tcp:{address}", "--scan-seconds", "5", "--json"],
                                   stdout=stdout, stderr=stderr, env=base_environment())
    try:
        wait_until(lambda: os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None, 60, "hwprobe to end")
    except AssertionError:
        os.kill(process.pid, signal.SIGKILL)
        raise
    finally:
        # This hwprobe's own peak, from its own rusage. RUSAGE_CHILDREN would be the largest of every
        # child this pytest process has reaped, so an earlier test's child would be blamed on the flood.
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    sent = peer.communicate(timeout=10)[0]
    assert process.returncode == 0, err.read_text()
    assert '"peripherals"' in out.read_text()
    # The peer really flooded (tens of MB in 5 s when nothing pushes back)…
    sent_bytes = int(sent.split("bytes=")[1].split()[0])
    assert sent_bytes > 5_000_000, sent
    # …and hwprobe stayed far under 100 MB resident (the whole process: Swift runtime included).
    assert usage.ru_maxrss < 100 * 1024, f"peak resident {usage.ru_maxrss} KiB after {sent_bytes} bytes of reports"


def test_overlapping_services_end_gatt_with_a_protocol_error_in_time():
    peer, address = start("overlap-services")
    started = time.monotonic()
    result = subprocess.run([hwprobe_binary(), "gatt", "--hci", f"tcp:{address}", "C0:FF:EE:00:4F:2A/random", "--json"],
                            capture_output=True, text=True, env=base_environment(), timeout=60)
    elapsed = time.monotonic() - started
    peer.kill()
    assert result.returncode != 0
    assert "services must follow one another without overlapping" in result.stdout + result.stderr
    assert elapsed < 35, f"took {elapsed:.1f} s"
