"""`--record` at the terminal: a subscription ended with Ctrl-C (exit 0 by the contract) keeps its
cassette, and the cassette replays the values that came, with no bench behind it."""

from __future__ import annotations

import json
import os
import re
import subprocess

from terminal import assert_sane_modes, hwprobe_binary

SCALE = "D4:12:3A:00:18:1D"  # the simulated bench's scale


def test_a_subscription_ended_with_ctrl_c_keeps_its_cassette(run, tmp_path):
    cassette = tmp_path / "weight.cassette"
    t = run(["gatt", "--hci", "sim:", SCALE, "--subscribe", "2A9D", "--record", str(cassette)],
            cols=120, rows=40, shell=True, env={"HWPROBE_SIM_SPEED": "4"})
    # The bench's scale indicates three weights, the last at 1.1 s (bench time) after subscribing.
    t.wait_for(lambda t: len(re.findall(r"^\d+\.\d{3}  14  ", t.text(), re.M)) == 3, timeout=30)
    t.press("ctrl-c")
    code, modes = t.finish(timeout=20)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)
    assert "the cassette was not kept" not in t.text(), t.dump()
    assert cassette.exists(), t.dump()
    assert oct(cassette.stat().st_mode & 0o777) == "0o600"
    text = cassette.read_text()
    assert text.startswith("hwprobe-cassette 1.1\n") and re.search(r"^end \d+$", text, re.M), text
    replay = subprocess.run([hwprobe_binary(), "gatt", "--hci", "replay:" + str(cassette), SCALE, "--subscribe", "2A9D",
                             "--count", "3", "--json"], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "HWPROBE_SIM_SPEED": "4"})
    assert replay.returncode == 0, replay.stderr
    values = [v["value"] for v in json.loads(replay.stdout)["subscription"]["values"]]
    assert values == ["002c38", "008638", "008638"], replay.stdout
