"""A short import soak through the real command in the terminal tests: each fault of
soak_import.FAULTS at least once (the full soak is scripts/soak-import, 300 runs)."""

import subprocess
import sys
from pathlib import Path

import soak_import


def test_every_fault_of_the_import_soak_ends_in_its_defined_state():
    runs = len(soak_import.FAULTS) + 4
    result = subprocess.run([sys.executable, str(Path(soak_import.__file__)), "--runs", str(runs), "--seed", "15"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert f"{runs} runs (" in result.stdout and ", 0 broke a rule" in result.stdout, result.stdout[-2000:]
