"""The backup import at the terminal: the password typed into the drawn field, a wrong one
first, Ctrl-C and signals at the prompt and during the key derivation, an empty password, a
damaged set started over."""

import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from terminal import assert_sane_modes, base_environment, hwprobe_binary

PASSWORD = "correct horse battery staple"  # the simulated bench's backup (DemoCommand.password)


@pytest.fixture
def out():
    with tempfile.TemporaryDirectory(prefix="hwprobe-pty-") as directory:
        yield Path(directory) / "vault.json"


def test_a_wrong_password_then_the_right_one(run, out):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    assert "type the password · Enter open · Esc cancel" in t.hints()
    t.type("not the password")
    t.wait_for("••••••••")
    assert "not the password" not in t.text(), "the password is never shown"
    t.press("enter")
    t.wait_for("Incorrect password", timeout=30)
    assert t.text().count("🔒") == 1, "one lock on the screen, however many attempts"
    # The refused field is empty again: what was typed is gone, not counted.
    assert "••••••••" not in t.text()
    t.type(PASSWORD).press("enter")
    code, modes = t.finish(timeout=30)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)
    assert out.read_text().startswith('{"items":')
    assert (out.stat().st_mode & 0o777) == 0o600


def test_three_wrong_passwords_exit_four(run, out):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    for attempt in range(1, 4):
        t.type(f"wrong {attempt}").press("enter")
        if attempt < 3:
            # Each refusal paints the footer row anew; wait for this attempt's before typing again.
            t.wait_for(lambda t: t.output.count("Incorrect password".encode()) >= attempt and "type the password" in t.hints(),
                       timeout=30)
    code, modes = t.finish(timeout=30)
    assert code == 4
    assert_sane_modes(modes, t.modes_before)
    assert not out.exists()


def test_enter_on_an_empty_field_asks_again(run, out):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.press("enter")
    t.wait_for("Type the backup's password, then press Enter.")
    assert "Decrypting" not in t.text()
    assert "type the password" in t.hints(), "still taking input"
    t.type(PASSWORD).press("enter")
    code, _ = t.finish(timeout=30)
    assert code == 0


@pytest.mark.parametrize("key", ["ctrl-c", "esc", "ctrl-d"])
def test_leaving_at_the_prompt(run, out, key):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.press(key)
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)
    assert not out.exists()


def test_ctrl_d_with_something_typed_does_not_leave(run, out):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.type("abc").press("ctrl-d")
    t.pump(0.3)
    assert "Enter Backup Password" in t.text()
    t.press("ctrl-u").type(PASSWORD).press("enter")
    assert t.finish(timeout=30)[0] == 0


def test_sigterm_at_the_prompt_restores_the_terminal(run, out):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.signal_hwprobe(signal.SIGTERM)
    code, modes = t.finish()
    assert code == 128 + signal.SIGTERM
    assert_sane_modes(modes, t.modes_before)


def test_sighup_at_the_prompt_restores_the_terminal(run, out):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.signal_hwprobe(signal.SIGHUP)
    code, modes = t.finish()
    assert code == 128 + signal.SIGHUP
    assert_sane_modes(modes, t.modes_before)


def test_ctrl_backslash_is_a_clean_exit_not_a_crash(run, out):
    t = run(["import", "--camera", "sim:", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=30)
    t.press("ctrl-backslash")
    code, modes = t.finish()
    assert code == 128 + signal.SIGQUIT
    assert_sane_modes(modes, t.modes_before)
    assert "Crash" not in t.output.decode("utf-8", "replace") and "backtrace" not in t.output.decode("utf-8", "replace").lower()


def test_ctrl_c_during_the_key_derivation_exits_130_at_once(run, out):
    # A backup with a derivation of seconds, and a wrong password: without the interrupt the
    # run would end with 4 when the derivation returns.
    t = run(["import", "--camera", "sim:?backup=slow", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=60)
    t.type("wrong password").press("enter")
    t.wait_for("Decrypting", timeout=10)
    assert "Esc back to the password · Ctrl-C quit" in t.hints()
    t.press("ctrl-c")
    code, modes = t.finish(timeout=10)
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_esc_during_the_derivation_goes_back_to_the_field(run, out):
    t = run(["import", "--camera", "sim:?backup=slow", "--out", str(out)], shell=True)
    t.wait_for("Enter Backup Password", timeout=60)
    t.type("wrong password").press("enter")
    t.wait_for("Decrypting", timeout=10)
    t.press("esc")
    t.wait_for(lambda t: "type the password" in t.hints() and "Decrypting" not in t.text(), timeout=5)
    # The abandoned derivation's late refusal is dropped: the field stays as it is.
    t.type(PASSWORD).press("enter")
    code, modes = t.finish(timeout=60)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)


def test_ctrl_c_while_scanning_codes(run, out):
    t = run(["import", "--camera", "sim:?backup=none", "--out", str(out)], shell=True)
    t.wait_for("Scan the QR codes")
    assert "Esc or q quit" in t.hints()
    t.press("ctrl-c")
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def test_a_damaged_set_is_started_over(run, out):
    t = run(["import", "--camera", "sim:?backup=damaged", "--out", str(out)], shell=True)
    t.wait_for("These codes don't fit together", timeout=30)
    assert t.focused() == "Start Over"
    assert "Enter Start Over · Esc quit" in t.hints()
    t.press("enter")
    t.wait_for("Enter Backup Password", timeout=60)
    t.type(PASSWORD).press("enter")
    code, modes = t.finish(timeout=30)
    assert code == 0, t.dump()
    assert_sane_modes(modes, t.modes_before)


def test_a_camera_that_stops_can_be_carried_on(run, out):
    t = run(["import", "--camera", "sim:?backup=short", "--out", str(out)], shell=True)
    # The flow's own "Camera disconnected" screen (its footer: "The camera stopped sending
    # pictures.") comes first; the command's screen with the choices replaces it.
    t.wait_for("codes scanned; they are kept", timeout=30)
    assert "The camera stopped" in t.text()
    assert "2 of 4 codes scanned; they are kept" in t.text()
    assert t.focused().startswith("Carry on with sim:")
    assert "↑/↓ move" in t.hints() and "Enter choose" in t.hints()
    t.press("esc")
    code, modes = t.finish()
    assert code == 130
    assert_sane_modes(modes, t.modes_before)


def run_plain(args, stdin=None, timeout=60):
    return subprocess.run([hwprobe_binary()] + args, input=stdin, capture_output=True, text=True,
                          env=base_environment(), timeout=timeout)


def test_an_empty_password_file_is_a_usage_error_before_scanning(out, tmp_path):
    for content in ["", "\n", "\r\n"]:
        empty = tmp_path / "empty"
        empty.write_text(content)
        result = run_plain(["import", "--camera", "sim:?backup=none", "--password-file", str(empty), "--out", str(out)], timeout=10)
        assert result.returncode == 2, result.stderr
        assert "is empty" in result.stderr
        assert "Scan the QR codes" not in result.stdout, "refused before any scanning"


def test_the_password_from_standard_input_and_dev_fd(out):
    result = run_plain(["import", "--camera", "sim:", "--password-file", "-", "--out", str(out)], stdin=PASSWORD + "\n")
    assert result.returncode == 0, result.stderr
    out.unlink()
    read, write = os.pipe()
    os.write(write, (PASSWORD + "\n").encode())
    os.close(write)
    result = subprocess.run([hwprobe_binary(), "import", "--camera", "sim:", "--password-file", f"/dev/fd/{read}", "--out", str(out)],
                            capture_output=True, text=True, env=base_environment(), timeout=60, pass_fds=(read,))
    os.close(read)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("target,code", [("/nonexistent/dir/v.json", 2), ("/proc/x", 3), ("/tmp", 2), ("/dev/null", 2)])
def test_out_is_checked_before_the_camera_opens(target, code):
    result = run_plain(["import", "--camera", "sim:?backup=none", "--password-file", "/dev/stdin", "--out", target, "--force"],
                       stdin="x\n", timeout=10)
    assert result.returncode == code, result.stderr
    assert "Scan the QR codes" not in result.stdout


def test_json_without_a_password_file_refuses_at_a_terminal_before_scanning(run, out):
    """Issue 27, item 1: --json is unattended, so at a terminal it neither prompts nor waits for
    a password it never asked for (it used to show nothing, echo what was typed and hang)."""
    t = run(["import", "--camera", "sim:", "--out", str(out), "--json"], shell=True)
    code, modes = t.finish(timeout=15)
    printed = t.output.decode("utf-8", "replace")
    assert code == 2, t.dump()
    assert '"kind" : "usage"' in printed, printed
    assert "--password-file" in printed
    assert "Scan the QR codes" not in printed, "refused before any scanning"
    assert_sane_modes(modes, t.modes_before)
    assert not out.exists()


def test_json_without_a_password_file_refuses_without_a_terminal(out):
    result = run_plain(["import", "--camera", "sim:", "--out", str(out), "--json"], stdin="", timeout=15)
    assert result.returncode == 2, result.stderr
    assert '"usage"' in result.stdout and "--password-file" in result.stderr
    assert "Scan the QR codes" not in result.stderr + result.stdout
