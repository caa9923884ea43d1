"""Issue 27, item 2: every file one run writes (--out, --record and its .y4m frames, --report,
--btsnoop) is checked against the others before anything opens. Two options naming one file,
however spelled, are a usage error (exit 2) naming both; nothing is created, nothing scanned."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from terminal import base_environment, hwprobe_binary

PASSWORD = "correct horse battery staple"  # the simulated bench's backup (DemoCommand.password)
MIRROR = "C0:FF:EE:00:4F:2A"


def run(args, cwd=None):
    return subprocess.run([hwprobe_binary()] + args, capture_output=True, text=True, env=base_environment(),
                          timeout=60, cwd=cwd, stdin=subprocess.DEVNULL)


@pytest.fixture
def password(tmp_path):
    path = tmp_path / "password"
    path.write_text(PASSWORD + "\n")
    return str(path)


def entries(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def assert_refused(result, first: str, second: str):
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert first in result.stderr and second in result.stderr, result.stderr
    assert "give each its own file" in result.stderr
    assert "Scan the QR codes" not in result.stdout + result.stderr, "refused before anything opened"


def import_args(password, *rest):
    return ["import", "--camera", "sim:", "--password-file", password, *rest]


def test_out_and_a_report_on_one_file(tmp_path, password):
    out = tmp_path / "vault.json"
    result = run(import_args(password, "--out", str(out), "--report", f"junit:{out}"))
    assert_refused(result, "--out", "--report junit:")
    assert entries(tmp_path) == ["password"]


def test_out_and_the_record_or_its_frames_file(tmp_path, password):
    out = tmp_path / "vault"
    assert_refused(run(import_args(password, "--out", str(out), "--record", str(out))), "--out", "--record")
    assert_refused(run(import_args(password, "--out", f"{out}.y4m", "--record", str(out))), "--out", "--record (its frames file)")
    assert entries(tmp_path) == ["password"]


def test_one_file_through_dot_dot_a_symlinked_directory_and_a_hard_link(tmp_path, password):
    (tmp_path / "sub").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "sub")
    out = tmp_path / "sub" / "vault.json"
    assert_refused(run(import_args(password, "--out", str(out), "--report", f"tap:{tmp_path}/sub/../sub/vault.json")),
                   "--out", "--report tap:")
    assert_refused(run(import_args(password, "--out", str(out), "--report", f"junit:{tmp_path}/alias/vault.json")),
                   "--out", "--report junit:")
    result = run(import_args(password, "--out", "vault.json", "--record", "./vault.json"), cwd=tmp_path / "sub")
    assert_refused(result, "--out", "--record")
    assert entries(tmp_path / "sub") == []
    # Two names of one existing file: --force would replace the vault with the report.
    out.write_text("old vault")
    os.link(out, tmp_path / "hard.xml")
    result = run(import_args(password, "--out", str(out), "--force", "--report", f"junit:{tmp_path}/hard.xml"))
    assert_refused(result, "--out", "--report junit:")
    assert out.read_text() == "old vault"


def test_btsnoop_and_record_on_one_file_refused_before_the_controller_opens(tmp_path):
    capture = tmp_path / "capture"
    result = run(["gatt", "--hci", "sim:", MIRROR, "--btsnoop", str(capture), "--record", str(capture)])
    assert_refused(result, "--record", "--btsnoop")
    assert result.stdout == "", "nothing was dumped: the run never started"
    assert entries(tmp_path) == []


def test_json_gets_the_usage_object(tmp_path):
    report = tmp_path / "r.xml"
    result = run(["check", "--hci", "sim:", MIRROR, "--report", f"junit:{report}", "--record", str(report), "--json"])
    assert result.returncode == 2, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "usage" and "--record" in error["message"] and "--report junit:" in error["message"]
    assert entries(tmp_path) == []


def test_distinct_files_still_run(tmp_path, password):
    result = run(import_args(password, "--out", str(tmp_path / "vault.json"), "--report", f"junit:{tmp_path / 'r.xml'}"))
    assert result.returncode == 0, result.stderr
    assert entries(tmp_path) == ["password", "r.xml", "vault.json"]
