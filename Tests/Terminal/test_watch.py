"""`hwprobe watch` hearing hotplug: under umockdev a serial port appears and goes away with its
uevents (umockdev sends them to the watch's netlink socket in libudev's encoding), and what was
there at the start is reported first."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from terminal import base_environment, hwprobe_binary

FIXTURES = Path(__file__).resolve().parents[1] / "Fixtures" / "umockdev"


@pytest.mark.skipif(not os.access("/usr/bin/umockdev-wrapper", os.X_OK), reason="umockdev not installed")
def test_a_serial_port_plugged_in_and_out_is_added_then_removed():
    result = subprocess.run(["umockdev-wrapper", "/usr/bin/python3", str(FIXTURES / "hotplug_watch.py"), "--",
                             hwprobe_binary(), "watch", "--seconds", "4", "--json"],
                            capture_output=True, text=True, env=base_environment(), timeout=60)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    serial = [(e["event"], e["device"]["path"]) for e in events if e["section"] == "serialPorts"]
    assert serial == [("added", "/dev/ttyUSB0"), ("added", "/dev/ttyACM0"), ("removed", "/dev/ttyACM0")], result.stdout
    for event in events:
        assert set(event) == {"event", "section", "device", "t"}
        assert event["t"] >= 0
    times = [e["t"] for e in events]
    assert times == sorted(times)


def test_watch_on_the_bench_adds_its_peripherals(tmp_path):
    env = base_environment(HWPROBE_SIM_SPEED="8")
    result = subprocess.run([hwprobe_binary(), "watch", "--hci", "sim:", "--seconds", "2", "--json"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    peripherals = [json.loads(line) for line in result.stdout.splitlines() if '"peripherals"' in line]
    drivers = sorted(e["device"]["driver"] for e in peripherals if e["event"] == "added")
    assert drivers == ["mirror-v1", "standard-scale"], result.stdout


def test_ctrl_c_ends_a_watch_with_exit_zero():
    # The bench's peripherals are certain to appear: once one has, the watch is running.
    process = subprocess.Popen([hwprobe_binary(), "watch", "--hci", "sim:", "--json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=base_environment(HWPROBE_SIM_SPEED="8"))
    try:
        for line in process.stdout:
            if '"peripherals"' in line:
                break
        process.send_signal(2)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, err
