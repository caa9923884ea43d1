"""The body scan on the simulated bench, answered with keys."""

import re
import signal

from terminal import assert_sane_modes


def test_a_whole_scan_with_realign_chosen_by_arrows_then_confirm(run):
    t = run(["scan", "--hci", "sim:"], shell=True)
    t.wait_for("Is the scale lined up?")
    assert t.focused() == "Confirm", "the first action is focused when a screen appears"
    assert "←/→ move · Enter Confirm · Esc quit" in t.hints()
    # A wait with a deadline says what it waits for and how long is left.
    t.wait_for(re.compile(r"waiting for your answer: \d+ s left"))
    t.press("right")
    t.wait_for(lambda t: t.focused() == "Re-align")
    assert "Enter Re-align" in t.hints()
    t.press("enter")
    t.wait_for("Line up the scale")
    # The scale was left as it was: once the reading holds, the question comes back.
    t.wait_for("Is the scale lined up?")
    assert t.focused() == "Confirm"
    t.press("enter")
    t.wait_for(re.compile(r"waiting for the scan to progress: \d+ s left"), timeout=40)
    t.wait_for("Scan complete", timeout=40)
    assert "72.35 kg · 18.4 % body fat" in t.text()
    assert "s left" not in t.text(), "nothing is waited for on the end screen"
    assert t.focused() == "Done"
    assert "Enter Done" in t.hints()
    t.press("enter")
    code, modes = t.finish()
    assert code == 0
    assert_sane_modes(modes, t.modes_before)
    # The result stays on the terminal after the screen is given back.
    assert "Scan complete" in t.text() and "72.35 kg" in t.text()
    assert "[▸Done◂]" not in t.text(), "no action is drawn once nothing can press it"


def test_try_again_after_a_failure_runs_the_scan_again(run):
    t = run(["scan", "--hci", "sim:?fault=disconnect&at=scanning"], shell=True)
    t.wait_for("Is the scale lined up?")
    t.press("enter")
    t.wait_for("Lost the mirror", timeout=40)
    assert t.focused() == "Try Again"
    assert "←/→ move · Enter Try Again · Esc quit" in t.hints()
    t.press("enter")
    # A fresh attempt: from looking for the mirror to the question again.
    t.wait_for("Is the scale lined up?", timeout=40)
    t.press("enter")
    t.wait_for("Scan complete", timeout=40)
    t.press("enter")
    code, modes = t.finish()
    assert code == 0
    assert_sane_modes(modes, t.modes_before)


def test_done_on_a_failure_exits_one(run):
    t = run(["scan", "--hci", "sim:?fault=error&at=scanning&code=1"], shell=True)
    t.wait_for("Is the scale lined up?")
    t.press("enter")
    t.wait_for("The scan stopped", timeout=40)
    assert "You moved during the scan." in t.text()
    t.press("tab")
    t.wait_for(lambda t: t.focused() == "Done")
    t.press("enter")
    code, modes = t.finish()
    assert code == 1
    assert_sane_modes(modes, t.modes_before)


def test_esc_leaves_the_scan_like_ctrl_c(run):
    t = run(["scan", "--hci", "sim:"], shell=True)
    t.wait_for("Is the scale lined up?")
    t.press("esc")
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_q_leaves_too(run):
    t = run(["scan", "--hci", "sim:"], shell=True)
    t.wait_for("Switch on the scale")
    t.press("q")
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_ctrl_c_during_scanning_cancels_with_130(run):
    t = run(["scan", "--hci", "sim:"], shell=True)
    t.wait_for("Is the scale lined up?")
    t.press("enter")
    t.wait_for(re.compile(r"\d+ % captured"), timeout=40)
    t.press("ctrl-c")
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_typed_text_never_lands_in_the_drawing(run):
    t = run(["scan", "--hci", "sim:"], cols=80, rows=24, shell=True)
    t.wait_for("Is the scale lined up?")
    def still(lines):  # the status row counts down on its own; everything else must stay
        return ["" if "s left" in line else line for line in lines]
    before = still(t.lines())
    t.type("hello").press("up", "down")
    # Any echo would show at once; the screen stays exactly as drawn.
    t.pump(0.3)
    assert still(t.lines()) == before
    assert "hello" not in t.text() and "^[[" not in t.text()
    t.press("esc")
    assert t.finish()[0] == 130
