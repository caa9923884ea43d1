"""The screen as a whole: a resize mid-scan, Ctrl-Z and fg, the demo's cue lines, unattended
runs on a terminal and through a pipe."""

import re
import signal
import subprocess

from terminal import Terminal, assert_sane_modes, base_environment, hwprobe_binary


def centred_column(width: int, text: str) -> int:
    return max(0, (width - len(text)) // 2)


def test_a_resize_mid_scan_redraws_at_the_new_width(run):
    t = run(["scan", "--hci", "sim:"], cols=100, rows=30, shell=True)
    t.wait_for("Is the scale lined up?")
    t.press("enter")
    t.wait_for(re.compile(r"\d+ % captured"), timeout=40)
    t.resize(50, 30)
    # Everything is laid out for 50 columns: the title centred for them, the bar inside them,
    # and nothing of the 100-column frame left behind.
    def relaid(t):
        lines = t.lines()
        title = [line for line in lines if line.strip() == "Scanning"]
        return len(title) == 1 and title[0].index("Scanning") == centred_column(50, "Scanning")
    t.wait_for(relaid, timeout=10)
    lines = t.lines()
    bar = next(line for line in lines if "%" in line and ("█" in line or "░" in line))
    assert len(bar) <= 50 and bar.rstrip().endswith("%")
    assert sum("Scanning" in line for line in lines) == 1
    assert sum("Stay still" in line for line in lines) == 1
    hints = t.hints()
    assert hints == "Esc or q quit" and lines[-1].index(hints) == centred_column(50, hints)
    t.press("esc")
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_ctrl_z_then_fg_repaints_and_keys_still_work(run):
    t = run(["scan", "--hci", "sim:"], cols=90, rows=28, job_control=True)
    t.wait_for("Is the scale lined up?", timeout=30)
    t.press("ctrl-z")
    # The job stopped, so the shell carried on with the rest of the line: `stty -a` shows the
    # modes hwprobe left while stopped, which must be the shell's own.
    code, stopped_modes = t.finish()
    assert code == 128 + signal.SIGTSTP
    assert_sane_modes(stopped_modes, t.modes_before)
    assert "Stopped" in t.output.decode("utf-8", "replace")
    prompts = t.output.count(t.PROMPT.encode())
    t.type("fg\r")
    t.wait_for(lambda t: "Is the scale lined up?" in t.text() and "[▸Confirm◂]" in t.text(), timeout=10)
    t.press("right")
    t.wait_for(lambda t: t.focused() == "Re-align")
    t.press("esc")
    t.wait_for(lambda t: t.output.count(t.PROMPT.encode()) > prompts, timeout=10)
    t.type('printf "\\nEXIT=%s\\n" "$?"; stty -a; printf "STTY-END\\n"\r')
    t.wait_for(lambda t: t.output.count(b"STTY-END") >= 4, timeout=10)  # two typed, two printed
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_the_demo_keeps_its_screen_while_cue_lines_arrive(run):
    t = run(["demo"], cols=80, rows=24, env=base_environment(HWPROBE_SIM_SPEED="8"))
    t.wait_for("♪", timeout=40)
    # The frame stays at the top and the cue lines go to the log area near the bottom: the
    # screen is not pushed up line by line.
    t.wait_for(lambda t: any("♪" in line for line in t.lines()[-6:]), timeout=20)
    assert t.lines()[0].strip() == ""
    t.wait_for("Scan complete", timeout=40)
    code = t.wait_exit(timeout=120)
    assert code == 0
    text = t.output.decode("utf-8", "replace")
    assert "Demo complete." in text
    # Given back, the terminal shows the whole transcript and the last screen.
    assert "Demo complete." in t.text()


def test_unattended_scan_on_a_terminal_shows_no_actions_at_the_end(run):
    t = run(["scan", "--hci", "sim:", "--yes"], shell=True)
    t.wait_for("Scan complete", timeout=60)
    assert "[" not in "".join(line for line in t.lines() if "Done" in line), "no Done button nobody can press"
    code, modes = t.finish()
    assert code == 0
    assert_sane_modes(modes, t.modes_before)
    assert "72.35 kg · 18.4 % body fat" in t.text()


def test_piped_the_result_line_has_the_weight_and_body_fat():
    result = subprocess.run([hwprobe_binary(), "scan", "--hci", "sim:", "--yes"], capture_output=True, text=True,
                            env=base_environment(), timeout=60)
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("Scan complete — 72.35 kg · 18.4 % body fat")
    assert "412,388 points captured" in last
    assert "Done" not in last, "no button words in a log"


def test_scan_with_a_mirror_address_without_its_type(run):
    result = subprocess.run([hwprobe_binary(), "scan", "--hci", "sim:", "--yes", "--json", "--mirror", "C0:FF:EE:00:4F:2A"],
                            capture_output=True, text=True, env=base_environment(), timeout=60)
    assert result.returncode == 0, result.stderr
    assert '"outcome":"complete"' in result.stdout.replace(" ", "")


def test_keys_work_when_only_the_output_is_piped(run):
    # stdin is the terminal, stdout a pipe: one line per screen, with the keys said under it.
    t = Terminal(["/bin/bash", "-c", f"'{hwprobe_binary()}' scan --hci sim: | cat; echo EXIT=${{PIPESTATUS[0]}}"])
    try:
        t.wait_for("keys: ←/→ move · Enter Confirm · Esc quit", timeout=30)
        assert "\x1b[?1049h" not in t.output.decode("utf-8", "replace"), "nothing is drawn into a pipe"
        t.press("right")
        t.wait_for("keys: ←/→ move · Enter Re-align · Esc quit")
        t.press("left", "enter")
        t.wait_for("keys: Enter Done · Esc quit", timeout=40)
        t.press("enter")
        t.wait_for("EXIT=0", timeout=10)
    finally:
        t.close()
