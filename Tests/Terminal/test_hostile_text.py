"""Issue 27, item 4: text from devices and files reaches the terminal as text, never as control.
A BLE name (in a cassette, as it would come over the air) and a damaged cassette line carrying
`ESC]0;T BEL ESC[2J ESC[31m` are printed with every control character shown (`\\x1B`), read back
through a terminal emulator: the window title is not changed, nothing printed before is cleared,
nothing turns red. JSON carries the same name escaped as JSON escapes it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from terminal import base_environment, hwprobe_binary

FIXTURES = Path(__file__).resolve().parents[1] / "Fixtures" / "cassettes"
HOSTILE = b"\x1b]0;T\x07\x1b[2J\x1b[31mE\xc2\x9b2J\x7f"
SCALE_NAME_AD = "0c0942656e6368205363616c65"  # "Bench Scale" in sim-weigh.cassette


def hostile_cassette(tmp_path: Path) -> Path:
    name = bytes([len(HOSTILE) + 1, 0x09]) + HOSTILE
    text = (FIXTURES / "sim-weigh.cassette").read_text()
    assert SCALE_NAME_AD in text
    path = tmp_path / "hostile.cassette"
    path.write_text(text.replace(SCALE_NAME_AD, name.hex()))
    return path


def assert_no_control_obeyed(t, before: str):
    screen = t.text()
    assert before in screen, "something printed before the name was cleared:\n" + t.dump()
    assert t.screen.title != "T", "the window title was changed"
    red = [char for line in t.screen.buffer.values() for char in line.values() if char.fg == "red"]
    assert not red, "text turned red"
    assert "\\x1B]0;T\\x07\\x1B[2J\\x1B[31mE" in screen, t.dump()


def test_list_shows_a_hostile_name_escaped(run, tmp_path):
    cassette = hostile_cassette(tmp_path)
    t = run(["list", "-v", "--hci", f"replay:{cassette}", "--scan-seconds", "1"], rows=60, cols=200)
    assert t.wait_exit(timeout=30) == 0, t.dump()
    assert_no_control_obeyed(t, "Bluetooth controllers")
    assert "\\u{9B}2J\\x7F" in t.text(), "C1 and DEL are shown too"


def test_a_damaged_cassette_line_is_quoted_escaped(run, tmp_path):
    path = tmp_path / "damaged.cassette"
    path.write_bytes(b"hwprobe-cassette 1.0\ndevice ble " + HOSTILE + b" random\nend\n")
    t = run(["gatt", "--hci", f"replay:{path}", "C0:FF:EE:00:4F:2A"], rows=30, cols=200)
    assert t.wait_exit(timeout=30) == 3, t.dump()
    assert "hwprobe gatt" in t.text(), t.dump()
    assert t.screen.title != "T"
    assert "\x1b" not in t.output.decode("utf-8", "replace"), "no raw escape reached the terminal"


def test_json_escapes_the_name_as_json_does(tmp_path):
    cassette = hostile_cassette(tmp_path)
    result = subprocess.run([hwprobe_binary(), "list", "--hci", f"replay:{cassette}", "--scan-seconds", "1", "--json"],
                            capture_output=True, env=base_environment(), timeout=30)
    assert result.returncode == 0, result.stderr
    for raw in [b"\x1b", b"\x07", b"\xc2\x9b", b"\x7f"]:
        assert raw not in result.stdout, raw
    names = [p.get("name") for p in json.loads(result.stdout)["peripherals"]]
    assert "\x1b]0;T\x07\x1b[2J\x1b[31mE\u009b2J\x7f" in names, names
