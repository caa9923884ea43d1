"""hwprobe against a hostile controller (Tests/Peers/hostile_controller.py): the bounds of the
host stack, seen from outside the process as a person would see them — memory, time, words."""

import resource
import subprocess
import sys
import time
from pathlib import Path

from terminal import REPO, base_environment, hwprobe_binary

PEER = REPO / "Tests" / "Peers" / "hostile_controller.py"


def start(mode):
    peer = subprocess.Popen([sys.executable, str(PEER), "--mode", mode], stdout=subprocess.PIPE, text=True)
    line = peer.stdout.readline()
    assert line.startswith("READY tcp="), line
    return peer, line.split("=", 1)[1].strip()


def test_a_flood_of_advertising_reports_keeps_hwprobe_small():
    peer, address = start("flood-adv")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = subprocess.run([hwprobe_binary(), "list", "--hci", f"tcp:{address}", "--scan-seconds", "5", "--json"],
                            capture_output=True, text=True, env=base_environment(), timeout=60)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    sent = peer.communicate(timeout=10)[0]
    assert result.returncode == 0, result.stderr
    assert '"peripherals"' in result.stdout
    # The peer really flooded (tens of MB in 5 s when nothing pushes back)…
    sent_bytes = int(sent.split("bytes=")[1].split()[0])
    assert sent_bytes > 5_000_000, sent
    # …and hwprobe stayed far under 100 MB resident (the whole process: Swift runtime included).
    assert max(before, peak_kib) < 100 * 1024, f"peak resident {peak_kib} KiB after {sent_bytes} bytes of reports"


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
