import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from terminal import ShellTerminal, Terminal, base_environment, hwprobe_binary  # noqa: E402


@pytest.fixture
def run():
    """Starts hwprobe (args after the binary) in a pty; every terminal is closed afterwards."""
    started = []

    def start(args, cols=100, rows=30, env=None, shell=False, job_control=False):
        if shell or job_control:
            terminal = ShellTerminal(args, cols, rows, env, job_control=job_control)
        else:
            terminal = Terminal([hwprobe_binary()] + args, cols, rows, env)
        started.append(terminal)
        return terminal

    yield start
    for terminal in started:
        terminal.close()


@pytest.fixture
def env():
    return base_environment()
