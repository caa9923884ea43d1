"""The labgrid place for a bench, proven on loopback (issue 19, item 4).

A coordinator, `hwprobe-labgrid-exporter` publishing two benches (a conforming bumble mirror and
one that answers a `scanToken` before `init` with the wrong ATT error), an SSH server standing in
for the exporter host, and places acquired with `labgrid-client`. Through them:

- the example (`examples/test_mirror_check.py`, run by pytest with `--lg-env`) checks the good
  mirror remotely, and its JUnit report arrives on the client saying every check passed;
- from this process, the deviant mirror's check comes back as exit 1 with the one failed check in
  the outcome and in both reports; a mirror that is not there is exit 3 (HwprobeDeviceError, its
  report fetched too); `run`, `list` and `gatt` return hwprobe's JSON.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from loopback import BIN, EXPORTER_NAME, SSH_ALIAS, SSH_UNREACHABLE, Lab, Unavailable, hwprobe_binary

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
MIRROR_SERVICE = "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    lab = Lab(root)
    try:
        binary = hwprobe_binary()
        lab.start_sshd()
        started = time.monotonic()
        mirrors = lab.start_mirrors({"mirror-good": (), "mirror-deviant": ("wrong-error-code",)})
        lab.good, lab.deviant = mirrors["mirror-good"], mirrors["mirror-deviant"]
        lab.start_coordinator()
        lab.start_exporter({"mirror-good": {**lab.good, "binary": binary},
                            "mirror-deviant": {**lab.deviant, "binary": binary},
                            "no-hwprobe": {"controller": "hci:0", "binary": "/nonexistent/hwprobe"}})
        lab.make_place("loopback-good", "mirror-good")
        lab.make_place("loopback-deviant", "mirror-deviant")
        lab.startup_seconds = time.monotonic() - started
    except Unavailable as missing:
        lab.close()
        pytest.skip(f"SKIP: the labgrid loopback test cannot run here: {missing}")
    except BaseException:
        lab.close()
        raise
    yield lab
    lab.close()


@pytest.fixture(scope="module")
def remote(lab, tmp_path_factory):
    """This process as a labgrid client: an Environment with both places as targets."""
    from labgrid import Environment
    from labgrid.util.ssh import sshmanager

    config = tmp_path_factory.mktemp("client") / "env.yaml"
    config.write_text("targets:\n"
                      "  good:\n    resources:\n      RemotePlace:\n        name: loopback-good\n"
                      "    drivers:\n      HwprobeDriver: {}\n"
                      "  deviant:\n    resources:\n      RemotePlace:\n        name: loopback-deviant\n"
                      "    drivers:\n      HwprobeDriver: {}\n"
                      "imports:\n  - hwprobe_labgrid\n")
    saved = {key: os.environ.get(key) for key in ("PATH", "LG_COORDINATOR")}
    os.environ.update(PATH=lab.env["PATH"], LG_COORDINATOR=lab.coordinator)
    env = Environment(config_file=str(config))
    try:
        yield env
    finally:
        env.cleanup()
        sshmanager.close_all()  # before the lab's sshd goes
        close_coordinator_session()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def close_coordinator_session():
    """Ends this process's stream to the coordinator the way labgrid-client does when it exits
    (otherwise the coordinator's shutdown waits its 5 s grace for it)."""
    from labgrid.resource.remote import RemotePlaceManager

    manager = RemotePlaceManager.get()
    if manager.session is not None:
        manager.loop.run_until_complete(manager.session.stop())
        manager.loop.run_until_complete(manager.session.close())
        manager.session = None


def driver_of(env, name):
    return env.get_target(name).get_driver("HwprobeDriver")  # (activates it)


def junit_suite(path: Path):
    root = ElementTree.parse(path).getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 1, ElementTree.tostring(root)[:500]
    return suites[0]


def test_the_example_checks_the_mirror_remotely_and_its_report_arrives(lab, tmp_path):
    reports = tmp_path / "reports"
    env = {**lab.env, "LG_PLACE": "loopback-good", "HWPROBE_MIRROR": lab.good["address"],
           "HWPROBE_REPORT_DIR": str(reports)}
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--lg-env", str(EXAMPLES / "env.yaml"), str(EXAMPLES / "test_mirror_check.py")],
                            env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                            stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{lab.log_tail('exporter')}"
    assert "2 passed" in result.stdout, result.stdout

    # The report hwprobe wrote on the bench host, here on the client.
    [report] = list(reports.glob("*.xml"))
    suite = junit_suite(report)
    assert suite.get("name") == "mirror-v1"
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) >= 30
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    assert not [case for case in cases if case.find("failure") is not None or case.find("error") is not None]
    command = suite.find("properties/property[@name='command']").get("value")
    assert f"--hci {lab.good['controller']} {lab.good['address']} --profile mirror-v1" in command
    (lab.root / "timings.txt").write_text(f"lab startup {lab.startup_seconds:.2f} s, example pytest {seconds:.2f} s\n")


def test_the_place_publishes_the_bench_as_the_exporter_saw_it(lab, remote):
    driver = driver_of(remote, "good")
    bench = driver.bench
    assert type(bench).__name__ == "NetworkHwprobeBench"
    assert bench.host == SSH_ALIAS
    assert bench.controller == lab.good["controller"]
    assert bench.binary == hwprobe_binary()
    assert driver.version.startswith("hwprobe ")
    shown = lab.client("-p", "loopback-good", "show").stdout
    assert f"{EXPORTER_NAME}/mirror-good/NetworkHwprobeBench" in shown


def test_a_deviation_arrives_as_a_failed_check_with_exit_1(lab, remote, tmp_path):
    driver = driver_of(remote, "deviant")
    outcome = driver.check(lab.deviant["address"], profile="mirror-v1", reports=("junit", "tap"), into=tmp_path)
    assert outcome.exit_code == 1 and not outcome.passed
    assert [check["id"] for check in outcome.failed_checks] == ["write.token-before-init"]
    assert outcome.summary["failed"] == 1 and outcome.summary["passed"] >= 30
    suite = junit_suite(outcome.reports["junit"])
    assert suite.get("failures") == "1"
    failed = [case for case in suite.findall("testcase") if case.find("failure") is not None]
    assert len(failed) == 1 and "0x81" in failed[0].find("failure").get("message")
    tap = outcome.reports["tap"].read_text()
    assert tap.startswith("TAP version 13") and tap.count("\nnot ok ") == 1
    assert outcome.reports["junit"].parent == tmp_path


def test_a_mirror_that_is_not_there_is_exit_3_with_its_report(lab, remote, tmp_path):
    from hwprobe_labgrid import HwprobeDeviceError

    driver = driver_of(remote, "good")
    with pytest.raises(HwprobeDeviceError) as raised:
        driver.check("00:11:22:33:44:55", profile="mirror-v1", into=tmp_path)
    error = raised.value
    assert error.exit_code == 3 and error.kind == "device"
    assert "00:11:22:33:44:55 not found" in error.message
    assert "not found" in error.stderr
    assert junit_suite(error.reports["junit"]).findall("testcase")


def test_run_list_and_gatt_return_hwprobe_json(lab, remote):
    from hwprobe_labgrid import HwprobeUsageError

    driver = driver_of(remote, "good")
    listed = driver.list(scan_seconds=1)
    mirrors = [p for p in listed["peripherals"] if p["address"] == lab.good["address"]]
    assert mirrors and mirrors[0].get("kind") == "mirror", listed["peripherals"]
    gatt = driver.gatt(lab.good["address"])
    assert MIRROR_SERVICE in [service["uuid"] for service in gatt["services"]]
    with pytest.raises(HwprobeUsageError) as raised:
        driver.run("check", "--profile", "no-such-profile", "--hci", driver.bench.controller)
    assert raised.value.exit_code == 2 and raised.value.kind == "usage"


def test_a_remote_command_past_its_timeout_is_stopped_on_the_bench_host_too(lab, remote):
    """Issue 27: on a timeout only the local ssh was killed, and the remote hwprobe kept the
    controller. The deadline now holds on the bench host (coreutils' timeout there)."""
    import subprocess

    from hwprobe_labgrid import HwprobeTransportError

    driver = driver_of(remote, "good")
    pattern = "hwprobe watch --hci sim:"  # nothing else in these tests runs watch
    with pytest.raises(HwprobeTransportError) as raised:
        driver.run("watch", "--hci", "sim:", timeout=2)  # watch runs until stopped
    assert raised.value.kind == "timedOut" and "stopped on the bench host" in raised.value.message
    # The bench host is this machine: no hwprobe of this run may be left.
    left = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"the remote hwprobe is still running: {left.stdout}"


def test_a_bench_without_its_binary_is_published_unavailable(lab):
    path = f"{EXPORTER_NAME}/no-hwprobe/NetworkHwprobeBench"
    assert path not in lab.client("resources").stdout.split()  # the available ones
    verbose = lab.client("-vv", "resources").stdout
    block = verbose[verbose.index(path):]
    assert re.search(r"'avail': False", block.split("Resource '", 1)[0]), block[:600]


def test_a_bench_host_out_of_reach_is_a_transport_error(lab, remote):  # remote: the ssh config in PATH
    from labgrid import Target

    from hwprobe_labgrid import HwprobeDriver, HwprobeTransportError, NetworkHwprobeBench

    target = Target("unreachable")
    NetworkHwprobeBench(target, name=None, host=SSH_UNREACHABLE, controller="hci:0", binary=hwprobe_binary())
    driver = HwprobeDriver(target, name=None)
    with pytest.raises(HwprobeTransportError) as raised:
        target.activate(driver)
    assert raised.value.kind == "ssh" and SSH_UNREACHABLE in raised.value.message


def test_the_exporter_is_labgrids_own():
    # The wrapper adds the export and is otherwise labgrid-exporter: same options.
    out = subprocess.run([str(BIN / "hwprobe-labgrid-exporter"), "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "--coordinator" in out.stdout and "--isolated" in out.stdout
