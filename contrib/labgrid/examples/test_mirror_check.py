"""Acquire a bench, run `hwprobe check` against its mirror there, and have the JUnit report here.

    labgrid-client -p PLACE acquire
    LG_PLACE=PLACE HWPROBE_MIRROR=AA:BB:CC:DD:EE:FF pytest --lg-env env.yaml test_mirror_check.py

HWPROBE_MIRROR is the mirror's address as the bench's controller sees it (`hwprobe list` on the
bench shows it; unset: the first mirror hwprobe finds). The report lands in HWPROBE_REPORT_DIR
(default: pytest's temporary directory for the test); a failed check fails the test with the
checks' messages.
"""

import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest


@pytest.fixture
def hwprobe(target):
    return target.get_driver("HwprobeDriver")  # activated: hwprobe --version has run on the bench host


@pytest.fixture
def report_dir(tmp_path):
    return Path(os.environ.get("HWPROBE_REPORT_DIR") or tmp_path)


def test_the_bench_runs_hwprobe(hwprobe):
    assert hwprobe.version.startswith("hwprobe ")


def test_the_mirror_conforms_to_mirror_v1(hwprobe, report_dir):
    outcome = hwprobe.check(os.environ.get("HWPROBE_MIRROR") or None, profile="mirror-v1", into=report_dir)
    junit = outcome.reports["junit"]
    suites = ElementTree.parse(junit).getroot()
    assert suites.get("failures") == str(outcome.summary["failed"])
    assert outcome.passed, "\n".join(f"{c['id']}: {c.get('message')}" for c in outcome.failed_checks)
