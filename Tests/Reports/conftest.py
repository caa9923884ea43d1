import sys
from pathlib import Path

# The terminal tests' helpers (the hwprobe binary, the environment, the pty terminal).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Terminal"))
