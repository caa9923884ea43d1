#!/usr/bin/python3
"""BlueZ's own GATT client (gatttool, interactive) on a kernel-managed controller, for the bench
VM's kernel group: the kernel's LE connection, L2CAP, ATT socket and (with --sec-level) Security
Manager meet a GATT server over the air of a bumble link.

    gatttool_client.py mirror    HCI ADDRESS[/random]
    gatttool_client.py protected HCI ADDRESS[/random] SEC-LEVEL UUID=HEX|UUID=refused:TEXT|UUID=unanswered...
    gatttool_client.py heart-rate HCI ADDRESS[/random]

`mirror`: against a mirror-v1 server (mirror-gatt-v1.md): discovers the service and its
characteristics and descriptors, reads deviceInfo, reads result too early (refused), subscribes
to scanState, scale and alignment through their CCCDs, writes init and a scanToken, and waits for
scanState to be notified warmingUp, then ready.
`protected`: raises the link's security to SEC-LEVEL (medium: encrypted, high: authenticated;
the kernel pairs, or encrypts with its bond) and reads each UUID by type, expecting that value or
a refusal whose text (gatttool's words) contains TEXT, or (UUID=unanswered) no answer at all.
`heart-rate`: against att_server.py's Heart Rate-like device (here through hwprobe relay):
discovers the service 180D, its two characteristics and 2A37's CCCD, reads 2A38 by UUID,
subscribes to 2A37 and waits for its three notifications (72, 73, 74 bpm).

Prints one line per check, "ok - WHAT" or "not ok - WHAT" with what gatttool said, then the
values it read as "value UUID HEX"; exits 1 if a check failed. gatttool runs on a pseudo-terminal
(it is a readline program); every wait has a deadline.
"""
from __future__ import annotations

import os
import pty
import re
import select
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\x01|\x02|\r")
MIRROR = "7b9e00{:02x}-3c2a-4f1b-9e6d-5a4c3b2a1f00"
CCCD = "00002902-0000-1000-8000-00805f9b34fb"


class Gatttool:
    """One interactive gatttool on a pty: commands in, lines out."""

    def __init__(self, hci: str, address: str):
        address, _, kind = address.partition("/")
        argv = ["gatttool", "-I", "-i", hci, "-b", address, "-t", "random" if kind == "random" else "public"]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvp(argv[0], argv)
        self.pending = ""
        self.transcript: list[str] = []
        self.failures = 0

    def send(self, command: str) -> None:
        self.transcript.append(f"> {command}")
        os.write(self.fd, command.encode() + b"\n")

    def expect(self, pattern: str, seconds: float) -> re.Match | None:
        """The first line from now on matching pattern, or None when the deadline passes."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + seconds
        while True:
            while "\n" in self.pending:
                line, self.pending = self.pending.split("\n", 1)
                line = ANSI.sub("", line).strip()
                # the prompt "[AA:…][LE]> " precedes what gatttool prints asynchronously
                line = re.sub(r"^(\[[0-9A-F:]{17}\]\[LE\]> ?)+", "", line)
                if not line:
                    continue
                self.transcript.append(line)
                found = regex.search(line)
                if found:
                    return found
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    return None
                self.pending += data.decode(errors="replace")

    def collect(self, pattern: str, last: str, seconds: float) -> list[re.Match]:
        """Every line matching pattern up to and including one that also matches last (the
        deadline ends it early)."""
        found = []
        deadline = time.monotonic() + seconds
        while True:
            line = self.expect(pattern, max(0.0, deadline - time.monotonic()))
            if line is None:
                return found
            found.append(line)
            if re.search(last, line.string):
                return found

    def check(self, what: str, ok: bool) -> bool:
        if ok:
            print(f"ok - {what}", flush=True)
        else:
            self.failures += 1
            print(f"not ok - {what}", flush=True)
            for line in self.transcript[-12:]:
                print(f"    {line}", flush=True)
        return ok

    def close(self) -> int:
        try:
            self.send("exit")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                done, _ = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.05)
            else:
                os.kill(self.pid, 9)
                os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            pass
        return 1 if self.failures else 0

    # -- steps ------------------------------------------------------------------------
    def connect(self) -> bool:
        self.send("connect")
        line = self.expect(r"Connection successful|Error: .*|connect error.*", 40)
        return self.check("gatttool connects through the kernel's LE connection and L2CAP ATT channel",
                          line is not None and line.group(0) == "Connection successful")

    def characteristics(self, last_uuid: str) -> dict[str, tuple[int, int]]:
        """uuid -> (properties, value handle), up to the characteristic last_uuid."""
        self.send("characteristics")
        found = self.collect(r"handle: 0x([0-9a-f]{4}), char properties: 0x([0-9a-f]{2}), "
                             r"char value handle: 0x([0-9a-f]{4}), uuid: ([0-9a-f-]{36})", last_uuid, 20)
        return {match.group(4): (int(match.group(2), 16), int(match.group(3), 16)) for match in found}

    def read(self, handle: int, seconds: float = 20) -> tuple[str | None, str | None]:
        """(value hex, error text)."""
        self.send(f"char-read-hnd 0x{handle:04x}")
        line = self.expect(r"Characteristic value/descriptor: ([0-9a-f ]*)|"
                           r"Characteristic value/descriptor read failed: (.*)", seconds)
        if line is None:
            return None, "no answer"
        return (line.group(1).replace(" ", "") if line.group(1) is not None else None), line.group(2)

    def write(self, handle: int, value: str, seconds: float = 20) -> str | None:
        """None when written, else gatttool's error."""
        self.send(f"char-write-req 0x{handle:04x} {value}")
        line = self.expect(r"Characteristic value was written successfully|"
                           r"Characteristic Write Request failed: (.*)", seconds)
        if line is None:
            return "no answer"
        return line.group(1)

    def notifications(self, handle: int, count: int, seconds: float) -> list[str]:
        """The values of the next count notifications of handle (fewer when the deadline passes)."""
        values = []
        deadline = time.monotonic() + seconds
        pattern = rf"Notification handle = 0x{handle:04x} value: ([0-9a-f ]*)"
        while len(values) < count and time.monotonic() < deadline:
            line = self.expect(pattern, deadline - time.monotonic())
            if line is None:
                break
            values.append(line.group(1).strip())
        return values


def mirror(tool: Gatttool) -> None:
    if not tool.connect():
        return
    tool.send("primary")
    service = tool.expect(r"attr handle: 0x([0-9a-f]{4}), end grp handle: 0x([0-9a-f]{4}) uuid: "
                          + MIRROR.format(1), 20)
    if not tool.check("primary service discovery finds the mirror service 7B9E0001", service is not None):
        return
    table = tool.characteristics(MIRROR.format(9))
    names = {2: "deviceInfo", 3: "init", 4: "scanToken", 5: "scanState", 6: "scale", 7: "alignment",
             8: "control", 9: "result"}
    # the profile's properties: read 0x02, write 0x08, notify 0x10
    want = {2: 0x02, 3: 0x08, 4: 0x08, 5: 0x12, 6: 0x12, 7: 0x12, 8: 0x08, 9: 0x02}
    got = {n: table.get(MIRROR.format(n), (None, None))[0] for n in want}
    if not tool.check(f"characteristic discovery finds all eight with the profile's properties ({got})", got == want):
        return
    handle = {names[n]: table[MIRROR.format(n)][1] for n in want}

    # The CCCDs, found by descriptor discovery after each notifying value
    cccd = {}
    for name in ("scanState", "scale", "alignment"):
        tool.send(f"char-desc 0x{handle[name] + 1:04x} 0x{handle[name] + 1:04x}")
        line = tool.expect(r"handle: 0x([0-9a-f]{4}), uuid: ([0-9a-f-]{36})|Discover descriptors failed.*", 20)
        if line is not None and line.group(2) == CCCD:
            cccd[name] = int(line.group(1), 16)
    if not tool.check(f"descriptor discovery finds a CCCD (2902) after scanState, scale and alignment ({cccd})",
                      len(cccd) == 3):
        return

    value, error = tool.read(handle["deviceInfo"])
    print(f"value deviceInfo {value}", flush=True)
    tool.check(f"deviceInfo reads protocol version 1 and five bytes ({value}, {error})",
               value is not None and len(value) == 10 and value.startswith("01"))
    value, error = tool.read(handle["result"])
    tool.check(f"result before the scan is complete is refused with ATT error 0x02 ({value}, {error})",
               value is None and error is not None and "can't be read" in error)

    for name in ("scanState", "scale", "alignment"):
        error = tool.write(cccd[name], "0100")
        tool.check(f"writing 01 00 to {name}'s CCCD succeeds ({error or 'written'})", error is None)

    error = tool.write(handle["scanToken"], "00" * 16)
    # BlueZ's attrib/att.h keeps 0x80-0x82 for its own application errors and names 0x81 "A
    # timeout occurred": that name is how gatttool shows the profile's 0x81 (not initialised).
    tool.check(f"scanToken before init is refused with ATT error 0x81, which gatttool calls \"{error}\"",
               error == "A timeout occurred")
    error = tool.write(handle["init"], "01d60600")  # opcode 1, 1750 mm, metric
    tool.check(f"init (1750 mm, metric) is written ({error or 'written'})", error is None)
    error = tool.write(handle["scanToken"], "a5" * 16)
    tool.check(f"a scanToken is written ({error or 'written'})", error is None)
    states = tool.notifications(handle["scanState"], 2, 30)
    print(f"value scanState-notified {states}", flush=True)
    tool.check(f"scanState is notified warmingUp (01 00 00) then ready (02 00 00) ({states})",
               states == ["01 00 00", "02 00 00"])
    value, error = tool.read(handle["scanState"])
    tool.check(f"scanState then reads ready ({value}, {error})", value == "020000")
    tool.send("disconnect")


def protected(tool: Gatttool, level: str, reads: list[str]) -> None:
    """Each of reads is UUID=HEX (the value read) or UUID=refused:TEXT (gatttool's error)."""
    tool.send(f"sec-level {level}")
    if not tool.connect():
        return
    for read in reads:
        uuid, _, want = read.lower().partition("=")
        tool.send(f"char-read-uuid {uuid}")
        line = tool.expect(r"handle: 0x[0-9a-f]{4} \t value: ([0-9a-f ]*)|Read characteristics by UUID failed: (.*)",
                           4 if want == "unanswered" else 40)
        value = line.group(1).replace(" ", "") if line is not None and line.group(1) is not None else None
        error = line.group(2) if line is not None else "no answer"
        print(f"value {uuid} {value}", flush=True)
        if want == "unanswered":
            # BlueZ's ATT layer (src/shared/att.c) answers 0x05 by raising the socket's security
            # to high and sending the request again once the kernel has paired for it: a pairing
            # that cannot be authenticated ends the link instead, and gatttool never answers.
            tool.check(f"with sec-level {level}, reading {uuid} gets no answer ({value or error})",
                       line is None)
        elif want.startswith("refused:"):
            tool.check(f"with sec-level {level}, reading {uuid} is refused ({value or error})",
                       value is None and want[len("refused:"):] in (error or "").lower())
        else:
            tool.check(f"with sec-level {level}, reading {uuid} gives {want} ({value or error})", value == want)
    tool.send("disconnect")


def heart_rate(tool: Gatttool) -> None:
    if not tool.connect():
        return
    tool.send("primary")
    service = tool.expect(r"attr handle: 0x([0-9a-f]{4}), end grp handle: 0x([0-9a-f]{4}) uuid: "
                          r"0000180d-0000-1000-8000-00805f9b34fb", 20)
    if not tool.check("primary service discovery finds the Heart Rate service 180D", service is not None):
        return
    table = tool.characteristics("00002a38-")
    got = {uuid[4:8]: properties for uuid, (properties, _) in table.items()}
    if not tool.check(f"characteristic discovery finds 2A37 (notify) and 2A38 (read) ({got})",
                      got == {"2a37": 0x10, "2a38": 0x02}):
        return
    measurement = table["00002a37-0000-1000-8000-00805f9b34fb"][1]
    tool.send(f"char-desc 0x{measurement + 1:04x} 0x{measurement + 1:04x}")
    line = tool.expect(r"handle: 0x([0-9a-f]{4}), uuid: ([0-9a-f-]{36})|Discover descriptors failed.*", 20)
    if not tool.check(f"descriptor discovery finds 2A37's CCCD ({line.group(0) if line else 'no answer'})",
                      line is not None and line.group(2) == CCCD):
        return
    tool.send("char-read-uuid 2a38")
    line = tool.expect(r"handle: 0x[0-9a-f]{4} \t value: ([0-9a-f ]*)|Read characteristics by UUID failed: (.*)", 20)
    value = line.group(1).replace(" ", "") if line is not None and line.group(1) is not None else None
    print(f"value 2a38 {value}", flush=True)
    tool.check(f"2A38 (Body Sensor Location) reads 01 ({value or (line.group(2) if line else 'no answer')})",
               value == "01")
    error = tool.write(measurement + 1, "0100")
    tool.check(f"writing 01 00 to 2A37's CCCD succeeds ({error or 'written'})", error is None)
    values = tool.notifications(measurement, 3, 10)
    print(f"value 2a37-notified {values}", flush=True)
    tool.check(f"2A37 is notified 72, 73 and 74 bpm ({values})", values == ["00 48", "00 49", "00 4a"])
    tool.send("disconnect")


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in ("mirror", "protected", "heart-rate") or (argv[0] == "protected" and len(argv) < 5):
        sys.exit(__doc__)
    tool = Gatttool(argv[1], argv[2])
    try:
        if argv[0] == "mirror":
            mirror(tool)
        elif argv[0] == "heart-rate":
            heart_rate(tool)
        else:
            protected(tool, argv[3], argv[4:])
    finally:
        status = tool.close()
    if os.environ.get("GATTTOOL_TRANSCRIPT"):
        with open(os.environ["GATTTOOL_TRANSCRIPT"], "w") as out:
            out.write("\n".join(tool.transcript) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
