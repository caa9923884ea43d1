"""The camera preview beside `import`'s screen, read back through the terminal emulator: the
picture, the outline of a code-like patch nobody can read, the hint, and then the read codes; the
preview left out where there is no terminal, with `--no-preview`, and on a terminal too small."""

import os
import random
import subprocess
import tempfile
from pathlib import Path

import pytest

import vb1video
from terminal import assert_sane_modes, base_environment, hwprobe_binary

PASSWORD = "preview password"
WIDTH, HEIGHT = 320, 240


@pytest.fixture
def work():
    with tempfile.TemporaryDirectory(prefix="hwprobe-preview-") as directory:
        yield Path(directory)


def noise_frame(rng: random.Random, size: int = 40, module: int = 4, left: int = 40, top: int = 100) -> bytes:
    """A small patch of random dark and light modules on white: code-like texture that no decoder
    reads (it has no finder patterns), small enough that the hint says to move closer."""
    pixels = bytearray([235]) * (WIDTH * HEIGHT)
    for my in range(size // module):
        for mx in range(size // module):
            if rng.random() < 0.5:
                for dy in range(module):
                    start = (top + my * module + dy) * WIDTH + left + mx * module
                    pixels[start:start + module] = b"\x10" * module
    return bytes(pixels)


def preview_video(path: Path, noise_seconds: float = 12, fps: int = 10) -> Path:
    """At `fps` (played paced, like a live camera): the small unreadable patch for `noise_seconds`,
    then a backup's three codes, each held for a second."""
    rng = random.Random(16)
    codes = vb1video.codes(vb1video.container(b'{"items":[]}', PASSWORD), 3)
    with open(path, "wb") as out:
        out.write(f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F{fps}:1 Ip A1:1 Cmono\n".encode())
        patch = noise_frame(rng)
        for _ in range(int(noise_seconds * fps)):
            out.write(b"FRAME\n" + patch)
        for text in codes:
            shown = vb1video.frame(WIDTH, HEIGHT, text)
            for _ in range(fps):
                out.write(b"FRAME\n" + shown)
    return path


def preview_columns(t, start: int) -> list[str]:
    """The part of each screen row from column `start` on: where a preview beside the frame is."""
    return [line[start:] for line in t.screen.display]


def test_the_preview_outlines_an_unread_patch_and_says_move_closer(run, work):
    video = preview_video(work / "patch.y4m")
    out = work / "vault.json"
    t = run(["import", "--camera", f"file:{video}", "--out", str(out)], cols=120, rows=36, shell=True)
    t.wait_for("move closer", timeout=30)
    # Beside the frame: the preview takes the right-hand columns (120 columns: 46 of them).
    right = preview_columns(t, 60)
    assert any("◌ move closer" in line for line in right), t.dump()
    outline = "\n".join(right)
    for corner in "┌┐└┘":
        assert corner in outline, f"no {corner} of the patch's outline:\n{t.dump()}"
    # The outline is amber (the theme's warning colour, here the 256-colour palette's nearest:
    # xterm-256color without COLORTERM), drawn over the picture's half-blocks.
    cells = [t.screen.buffer[row][column] for row in range(t.rows) for column in range(60, t.cols)]
    corners = [cell for cell in cells if cell.data == "┌"]
    assert corners and all(cell.fg == "ffaf5f" for cell in corners), [(c.data, c.fg) for c in corners]
    assert sum(cell.data == "▀" for cell in cells) > 200, "the picture itself, in half-blocks"
    # The flow's own screen is still there on the left.
    assert "Scan" in t.text()
    # Then the codes come into view and are read; the password screen has no preview.
    t.wait_for("Enter Backup Password", timeout=60)
    t.wait_for(lambda t: "▀" not in t.text(), timeout=10)
    t.type(PASSWORD).press("enter")
    code, modes = t.finish(timeout=30)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)
    assert out.read_text() == '{"items":[]}'


def test_on_a_narrow_tall_terminal_the_preview_goes_above(run, work):
    video = preview_video(work / "patch.y4m")
    t = run(["import", "--camera", f"file:{video}", "--out", str(work / "vault.json")], cols=70, rows=44, shell=True)
    t.wait_for("move closer", timeout=30)
    lines = t.lines()
    picture = [i for i, line in enumerate(lines) if "▀" in line]
    title = next(i for i, line in enumerate(lines) if "Scan the QR codes" in line)
    assert picture and max(picture) < title, t.dump()
    assert any("┌" in line for line in lines[:title])
    t.press("esc")
    code, modes = t.finish(timeout=30)
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_no_preview_and_a_small_terminal_draw_none(run, work):
    video = preview_video(work / "patch.y4m", noise_seconds=3)
    for args, cols, rows in [(["--no-preview"], 120, 36), ([], 50, 16)]:
        out = work / f"vault-{cols}.json"
        t = run(["import", "--camera", f"file:{video}", "--out", str(out)] + args, cols=cols, rows=rows, shell=True)
        t.wait_for("Enter Backup Password", timeout=60)
        assert not any(mark in t.output.decode("utf-8", "replace") for mark in ["▀", "move closer", "┌"]), t.dump()
        t.press("esc")
        code, _ = t.finish(timeout=30)
        assert code == 130


def test_in_a_pipe_the_output_is_the_same_with_or_without_the_preview(work):
    video = preview_video(work / "patch.y4m", noise_seconds=1)
    password = work / "password"
    password.write_text(PASSWORD + "\n")
    outputs = []
    for extra in [[], ["--no-preview"]]:
        out = work / "vault.json"
        result = subprocess.run([hwprobe_binary(), "import", "--camera", f"file:{video}?pace=max", "--password-file", str(password),
                                 "--out", str(out), "--force"] + extra, capture_output=True, text=True, env=base_environment(), timeout=60)
        assert result.returncode == 0, result.stderr
        outputs.append((result.stdout, result.stderr))
    assert outputs[0] == outputs[1]
    assert "\x1b" not in outputs[0][0] + outputs[0][1]
