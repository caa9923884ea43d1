"""The adapter without a lab: HwprobeBench on this host (no exporter, no SSH) with the driver
bound in code, against hwprobe's simulated bench (`sim:`), and the resources' own checks."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest
from labgrid import Target

from hwprobe_labgrid import HwprobeBench, HwprobeDriver, HwprobeUsageError, NetworkHwprobeBench
from loopback import Unavailable, hwprobe_binary

SIM_MIRROR = "C0:FF:EE:00:4F:2A"  # the simulated bench's mirror


@pytest.fixture
def binary():
    try:
        return hwprobe_binary()
    except Unavailable as missing:
        pytest.skip(f"SKIP: {missing}")


@pytest.fixture
def fast_sim(monkeypatch):
    # The simulated mirror runs faster than life (as in Tests/Terminal); hwprobe inherits this.
    monkeypatch.setenv("HWPROBE_SIM_SPEED", "8")


def local_driver(binary, controller="sim:"):
    target = Target("local-bench")
    HwprobeBench(target, name=None, controller=controller, binary=binary)
    driver = HwprobeDriver(target, name=None)
    target.activate(driver)
    return driver


def test_a_local_bench_checks_the_simulated_mirror_and_copies_the_report(binary, fast_sim, tmp_path):
    driver = local_driver(binary)
    outcome = driver.check(SIM_MIRROR, profile="mirror-v1", reports=("junit", "tap"), into=tmp_path)
    assert outcome.passed and outcome.summary["failed"] == 0
    suite = ElementTree.parse(outcome.reports["junit"]).getroot().find("testsuite")
    assert suite.get("name") == "mirror-v1" and suite.get("failures") == "0"
    assert outcome.reports["tap"].read_text().startswith("TAP version 13")


def test_a_local_deviation_is_exit_1(binary, fast_sim, tmp_path):
    driver = local_driver(binary, "sim:?deviation=wrong-property")
    outcome = driver.check(SIM_MIRROR, profile="mirror-v1", into=tmp_path)
    assert outcome.exit_code == 1 and outcome.failed_checks
    assert ElementTree.parse(outcome.reports["junit"]).getroot().find("testsuite").get("failures") != "0"


def test_usage_errors_carry_hwprobe_s_kind_and_stderr(binary):
    driver = local_driver(binary)
    with pytest.raises(HwprobeUsageError) as raised:
        driver.run("weigh", "--timeout", "not-a-number", "--hci", "sim:")
    assert raised.value.exit_code == 2 and raised.value.kind == "usage"
    assert "exit 2 (usage error)" in str(raised.value)


def test_the_resources_refuse_what_is_not_an_hci_uri_and_know_when_hwprobe_is_missing(tmp_path):
    target = Target("resources")
    with pytest.raises(ValueError, match="HCI URI"):
        HwprobeBench(target, name="bad", controller="/dev/hci0")
    bench = HwprobeBench(target, name="gone", controller="hci:0", binary=str(tmp_path / "hwprobe"),
                         devices="v4l2:/dev/video0 usb:045e:028e")
    bench.poll()
    assert not bench.avail
    assert bench.devices == ["v4l2:/dev/video0", "usb:045e:028e"]
    remote = NetworkHwprobeBench(target, name="remote", host="bench-1", controller="tcp:127.0.0.1:9101",
                                 devices=["v4l2:/dev/video0"])
    assert remote.host == "bench-1" and remote.devices == ["v4l2:/dev/video0"] and remote.binary == "hwprobe"


def test_a_command_that_outruns_its_timeout_is_killed_and_says_so(binary):
    from hwprobe_labgrid import HwprobeTransportError

    driver = local_driver(binary)
    with pytest.raises(HwprobeTransportError) as raised:
        driver.run("watch", "--hci", "sim:", timeout=1)  # watch runs until Ctrl-C
    assert raised.value.kind == "timedOut" and raised.value.exit_code is None
    assert "no exit within 1 s" in str(raised.value)


def test_a_bench_host_that_ssh_would_take_for_an_option_is_refused(tmp_path):
    """Issue 27: a rogue exporter publishing `-oProxyCommand=…` as the host would have the
    client's ssh run that command; the resource refuses such a host outright."""
    target = Target("hostile-host")
    marker = tmp_path / "ran"
    for host in (f"-oProxyCommand=touch {marker}", "-p2222", "bench 1", "bench\n1", "bench\x1b[2J"):
        with pytest.raises(ValueError, match="refusing the bench host"):
            NetworkHwprobeBench(target, name=None, host=host, controller="hci:0")
    assert not marker.exists()
    assert NetworkHwprobeBench(target, name="ok", host="user@bench-1.lab", controller="hci:0").host == "user@bench-1.lab"
