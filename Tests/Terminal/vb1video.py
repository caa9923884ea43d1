"""VB1 backups as a camera sees them, made independently of hwprobe's own code: the container
(docs/vb1-backup-format.md) through Python's hashlib scrypt and the `cryptography` package's AES-GCM,
the codes' Base45 by hand, the QR symbols by Debian's `qrencode`, and a YUV4MPEG2 (mono) video
that `--camera file:PATH?pace=max` plays.

Used by the terminal tests and the import soak (Tests/Soak/import_command_soak.py).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import subprocess
import unicodedata
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

BASE45 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"


def base45(data: bytes) -> str:
    out = []
    for i in range(0, len(data) - 1, 2):
        n = data[i] * 256 + data[i + 1]
        c, n = n % 45, n // 45
        d, e = n % 45, n // 45
        out += [BASE45[c], BASE45[d], BASE45[e]]
    if len(data) % 2:
        c, d = data[-1] % 45, data[-1] // 45
        out += [BASE45[c], BASE45[d]]
    return "".join(out)


def container(plaintext: bytes, password: str, log_n: int = 10, r: int = 8, p: int = 1, encrypt: bool = True) -> bytes:
    """A VB1 container. With `encrypt=False` nothing is derived (hostile parameters cost nothing
    to make): the key check and ciphertext are random bytes of the right sizes."""
    salt, nonce = os.urandom(16), os.urandom(12)
    head = b"VLTB" + bytes([1, 1, log_n, r, p]) + salt + nonce
    if not encrypt:
        return head + os.urandom(8) + os.urandom(len(plaintext) + 16)
    key = hashlib.scrypt(unicodedata.normalize("NFC", password).encode(), salt=salt, n=2 ** log_n, r=r, p=p,
                         maxmem=256 * r * (2 ** log_n) + (1 << 24), dklen=32)
    header = head + hmac.new(key, b"VLTB key check", hashlib.sha256).digest()[:8]
    return header + AESGCM(key).encrypt(nonce, plaintext, header)


def codes(data: bytes, count: int) -> list[str]:
    ident = hashlib.sha256(data).digest()[:4].hex().upper()
    size = math.ceil(len(data) / count)
    parts = [data[i * size:(i + 1) * size] for i in range(count)]
    return [f"VB1:{ident}:{i + 1}/{count}:{base45(part)}" for i, part in enumerate(parts)]


def modules(text: str) -> list[list[bool]]:
    """The QR module matrix of `text` (qrencode picks alphanumeric mode for VB1 codes)."""
    ascii_art = subprocess.run(["qrencode", "-t", "ASCII", "-m", "0", "-l", "M", text],
                               check=True, capture_output=True, text=True).stdout
    return [[line[i] == "#" for i in range(0, len(line), 2)] for line in ascii_art.splitlines() if line]


def frame(width: int, height: int, text: str | None) -> bytes:
    """One grey frame: white, with the code centred (a quiet zone of four modules) or blank."""
    pixels = bytearray([235]) * (width * height)
    if text is None:
        return bytes(pixels)
    grid = modules(text)
    size = len(grid)
    module = max(1, min(width, height) // (size + 8))
    left, top = (width - size * module) // 2, (height - size * module) // 2
    for y, row in enumerate(grid):
        for x, dark in enumerate(row):
            if dark:
                for dy in range(module):
                    start = (top + y * module + dy) * width + left + x * module
                    pixels[start:start + module] = b"\x10" * module
    return bytes(pixels)


def video(path: Path, texts: list[str], width: int = 400, height: int = 400) -> Path:
    """A video showing each text as a QR code, with a blank frame before each."""
    with open(path, "wb") as out:
        out.write(f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 Cmono\n".encode())
        for text in texts:
            for shown in (None, text):
                out.write(b"FRAME\n")
                out.write(frame(width, height, shown))
    return path


def backup_video(path: Path, plaintext: bytes, password: str, count: int = 3, **parameters) -> Path:
    data = container(plaintext, password, **parameters)
    return video(path, codes(data, count))
