"""`--report junit:FILE` and `--report tap:FILE` read by tools hwprobe did not write: the JUnit
XML validated against the rules Jenkins' xUnit plugin applies (jenkins-junit-rules.xsd) and read by
junitparser, the TAP parsed by tap.py (TAP 13 with its YAML blocks). One case per run: passed,
or failed with the failure's reason; a hostile name cannot break the XML."""

import os
import signal
import subprocess
from pathlib import Path

import pytest
import xmlschema
from junitparser import Failure, JUnitXml
from tap.parser import Parser

from terminal import base_environment, hwprobe_binary

SCHEMA = xmlschema.XMLSchema(str(Path(__file__).with_name("jenkins-junit-rules.xsd")))


def hwprobe(*args, timeout=60):
    return subprocess.run([hwprobe_binary(), *args], capture_output=True, text=True, env=base_environment(), timeout=timeout)


def tap_lines(path: Path):
    return list(Parser().parse_text(path.read_text()))


def test_a_passing_weigh_writes_one_passed_case_in_both_formats(tmp_path):
    junit, tap = tmp_path / "weigh.xml", tmp_path / "weigh.tap"
    result = hwprobe("weigh", "--hci", "sim:", "--report", f"junit:{junit}", "--report", f"tap:{tap}")
    assert result.returncode == 0, result.stderr
    SCHEMA.validate(str(junit))
    xml = JUnitXml.fromfile(str(junit))
    suites = list(xml)
    assert len(suites) == 1 and suites[0].name == "hwprobe weigh"
    cases = list(suites[0])
    assert len(cases) == 1 and cases[0].is_passed and cases[0].classname == "hwprobe.weigh"
    assert cases[0].time > 0
    lines = tap_lines(tap)
    assert lines[0].category == "version" and lines[0].version == 13
    assert lines[1].category == "plan" and lines[1].expected_tests == 1
    results = [line for line in lines if line.category == "test"]
    assert len(results) == 1 and results[0].ok and results[0].number == 1
    assert results[0].yaml_block["id"] == "hwprobe.weigh"
    assert (junit.stat().st_mode & 0o777) == 0o600


def test_a_failing_run_carries_its_reason(tmp_path):
    junit, tap = tmp_path / "r.xml", tmp_path / "r.tap"
    result = hwprobe("weigh", "--hci", "sim:", "00:11:22:33:44:55", "--timeout", "1",
                     "--report", f"junit:{junit}", "--report", f"tap:{tap}")
    assert result.returncode == 3
    SCHEMA.validate(str(junit))
    case = list(list(JUnitXml.fromfile(str(junit)))[0])[0]
    assert not case.is_passed
    failure = case.result[0]
    assert isinstance(failure, Failure)
    assert failure.type == "device"
    assert "00:11:22:33:44:55 not found" in failure.message and "(exit 3)" in failure.message
    test = [line for line in tap_lines(tap) if line.category == "test"][0]
    assert not test.ok
    assert test.yaml_block["kind"] == "device"
    assert "not found" in test.yaml_block["message"]


def test_haptics_and_import_report_too(tmp_path):
    report = tmp_path / "h.tap"
    result = hwprobe("haptics", "--device", "log:", "--cue", "success", "--report", f"tap:{report}")
    assert result.returncode == 0, result.stderr
    test = [line for line in tap_lines(report) if line.category == "test"][0]
    assert test.ok and "haptics on log: (success)" in test.description
    junit = tmp_path / "i.xml"
    password = tmp_path / "password"
    password.write_text("correct horse battery staple\n")
    result = hwprobe("import", "--camera", "sim:", "--password-file", str(password), "--out", str(tmp_path / "vault.json"),
                     "--report", f"junit:{junit}")
    assert result.returncode == 0, result.stderr
    SCHEMA.validate(str(junit))
    assert list(list(JUnitXml.fromfile(str(junit)))[0])[0].is_passed


def test_a_hostile_device_name_cannot_break_the_xml(tmp_path):
    # The address typed on the command line goes into the case's name: control characters,
    # quotes and markup in it must come out as valid XML (and one TAP line).
    hostile = "AA:BB<&>\"'\x01\x1b]0;title\x07"
    junit, tap = tmp_path / "h.xml", tmp_path / "h.tap"
    result = hwprobe("weigh", "--hci", "sim:", hostile, "--timeout", "1", "--report", f"junit:{junit}", "--report", f"tap:{tap}")
    assert result.returncode != 0
    SCHEMA.validate(str(junit))
    name = list(list(JUnitXml.fromfile(str(junit)))[0])[0].name
    assert "AA:BB<&>\"'" in name and "\x01" not in name and "\x1b" not in name
    tests = [line for line in tap_lines(tap) if line.category == "test"]
    assert len(tests) == 1 and not tests[0].ok


@pytest.mark.parametrize("value, words", [
    ("xml:/tmp/x", "wants junit:FILE or tap:FILE"),
    ("junit:", "needs a file name"),
])
def test_a_wrong_report_option_is_a_usage_error_before_anything_opens(value, words):
    result = hwprobe("weigh", "--hci", "sim:", "--report", value)
    assert result.returncode == 2
    assert words in result.stderr
    assert "kg" not in result.stdout


def test_a_report_path_that_is_not_a_regular_file_is_refused_first(tmp_path):
    (tmp_path / "dir").mkdir()
    result = hwprobe("weigh", "--hci", "sim:", "--report", f"tap:{tmp_path / 'dir'}")
    assert result.returncode == 2, result.stderr
    assert "kg" not in result.stdout
    link = tmp_path / "link.tap"
    link.symlink_to(tmp_path / "elsewhere.tap")
    result = hwprobe("weigh", "--hci", "sim:", "--report", f"tap:{link}")
    assert result.returncode == 2
    assert not (tmp_path / "elsewhere.tap").exists()


def test_reports_name_the_device_and_the_peripheral(tmp_path):
    """A lab reads which device a run used from the report itself: the device as typed (its `id`
    too when it is a local device, see DeviceIdentityTests) and the peripheral's address."""
    junit, tap = tmp_path / "w.xml", tmp_path / "w.tap"
    result = hwprobe("weigh", "--hci", "sim:", "00:11:22:33:44:55", "--timeout", "1",
                     "--report", f"junit:{junit}", "--report", f"tap:{tap}")
    assert result.returncode == 3, result.stderr   # not found: the report is written all the same
    SCHEMA.validate(str(junit))
    suite = list(JUnitXml.fromfile(str(junit)))[0]
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["device"] == "sim:" and properties["peripheral"] == "00:11:22:33:44:55"
    assert properties["command"].startswith("hwprobe weigh --hci sim:")
    text = tap.read_text()
    assert "# device: sim:\n" in text and "# peripheral: 00:11:22:33:44:55\n" in text
    assert [line.category for line in tap_lines(tap)][:2] == ["version", "plan"]


# -- issue 27, item 7: an interrupted check still writes its report ------------------------------

MIRROR = "C0:FF:EE:00:4F:2A"


def started_checks(process: subprocess.Popen, count: int, timeout: float = 60) -> str:
    """stderr until the status of check number `count` shows (each new status is a line there)."""
    import selectors
    import time

    seen = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        while f"[{count}/".encode() not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or process.poll() is not None and not selector.select(0):
                raise AssertionError(f"check {count} never started; stderr: {seen.decode(errors='replace')}")
            if selector.select(left):
                chunk = os.read(process.stderr.fileno(), 65536)
                if not chunk and process.poll() is not None:
                    raise AssertionError(f"hwprobe ended first; stderr: {seen.decode(errors='replace')}")
                seen += chunk
    return seen.decode(errors="replace")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_check_still_writes_its_report(tmp_path, sig):
    junit, tap = tmp_path / "check.xml", tmp_path / "check.tap"
    process = subprocess.Popen([hwprobe_binary(), "check", "--hci", "sim:", MIRROR, "--report", f"junit:{junit}", "--report", f"tap:{tap}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_environment())
    try:
        started_checks(process, 2)
        process.send_signal(sig)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + sig, err
    SCHEMA.validate(str(junit))
    suites = list(JUnitXml.fromfile(str(junit)))
    assert len(suites) == 1 and suites[0].name == "mirror-v1", "one case per check of the profile, as an uninterrupted run"
    cases = list(suites[0])
    assert len(cases) > 2
    unfinished = [case for case in cases if case.is_skipped]
    assert unfinished, "the checks the signal stopped are in the report"
    assert any("interrupted" in (result.message or "") for case in unfinished for result in case.result)
    lines = tap_lines(tap)
    assert lines[1].category == "plan" and lines[1].expected_tests == len(cases)
