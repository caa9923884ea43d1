"""Issue 27, item 8: lines that are not the flow's own reach a terminal without spoiling its view.
`--haptics log:` cue lines and a replay's warnings go to the log area of a full-screen flow (and
into the transcript printed when it ends) instead of raw onto the screen; `check`'s progress line
is cleared before each result, so no result runs on from it."""
from __future__ import annotations

import re

from terminal import base_environment


def test_haptics_log_lines_stay_in_the_log_area_and_the_transcript(run):
    t = run(["scan", "--hci", "sim:", "--yes", "--haptics", "log:"], cols=100, rows=30,
            env=base_environment(HWPROBE_SIM_SPEED="8"))
    t.wait_for(lambda t: any("haptics +" in line for line in t.lines()), timeout=60)
    # On the drawn screen the cue lines are in the log area at the bottom; the frame at the top
    # is not pushed up or written over.
    rows = t.lines()
    first = next(i for i, line in enumerate(rows) if "haptics +" in line)
    assert first >= len(rows) - 8, t.dump()
    assert rows[0].strip() == "", t.dump()
    t.wait_for("Scan complete", timeout=60)
    assert t.wait_exit(timeout=60) == 0
    # Given back, the transcript holds them.
    assert "haptics +" in t.text()


def test_the_check_progress_line_is_cleared_before_each_result(run):
    t = run(["check", "--hci", "sim:", "C0:FF:EE:00:4F:2A", "--profile", "mirror-v1"], cols=160, rows=60,
            env=base_environment(HWPROBE_SIM_SPEED="25"))
    code = t.wait_exit(timeout=180)
    assert code == 0, t.dump()
    text = t.output.decode("utf-8", "replace")
    # Every result line begins the line it is on: nothing of "[n/46] …" before it.
    screen = "\n".join(t.lines())
    assert re.search(r"\]\s.*(PASS|FAIL|SKIP) ", screen) is None, screen
    assert sum(1 for line in t.lines() if line.lstrip().startswith(("PASS", "FAIL", "SKIP"))) >= 20, screen


def test_term_dumb_gets_lines_not_a_drawn_screen(run):
    """Issue 27, item 17: TERM=dumb cannot take cursor movement or the alternate screen."""
    t = run(["scan", "--hci", "sim:", "--yes"], env=base_environment(TERM="dumb", HWPROBE_SIM_SPEED="8"))
    assert t.wait_exit(timeout=60) == 0
    raw = t.output.decode("utf-8", "replace")
    assert "\x1b[?1049h" not in raw and "\x1b[H" not in raw, repr(raw[:300])
    assert "Scan complete" in raw
