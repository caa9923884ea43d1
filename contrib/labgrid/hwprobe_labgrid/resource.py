"""The bench as labgrid resources.

`HwprobeBench` is what an exporter's YAML (or a local environment) describes: one bench host with
one BLE controller that hwprobe drives and the hwprobe binary that drives it. Through an exporter
it reaches clients as `NetworkHwprobeBench`, the same fields plus `host`, the exporter host the
commands run on (over SSH, labgrid's usual way to reach an exporter).
"""

from __future__ import annotations

import os
import shutil

import attr
from labgrid.factory import target_factory
from labgrid.resource.common import NetworkResource, Resource

# The schemes hwprobe accepts for --hci (docs/cli.md, "Device URIs").
CONTROLLER_SCHEMES = ("hci", "uart", "tcp", "sim", "replay")


def checked_host(host) -> str:
    """`host` when it can only be a host name for ssh; ValueError otherwise.

    An exporter publishes the host its clients run hwprobe on, and the client hands it to ssh: a
    rogue or broken exporter publishing `-oProxyCommand=…` would have ssh run that command on the
    client. A host name or address never starts with '-' and holds no white space or control
    character, and ssh's own `user@host` form is kept.
    """
    if not isinstance(host, str) or not host or host.startswith("-") \
            or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in host):
        raise ValueError(f"refusing the bench host {host!r}: a host name for ssh cannot start with '-' or hold spaces or control characters")
    return host


def _controller_uri(instance, attribute, value):
    if not isinstance(value, str) or ":" not in value:
        raise ValueError(f"{attribute.name} must be an hwprobe HCI URI such as hci:0, tcp:HOST:PORT or sim:, not {value!r}")
    scheme = value.split(":", 1)[0]
    if scheme not in CONTROLLER_SCHEMES:
        raise ValueError(f"{attribute.name}: {value!r} is not an HCI URI ({', '.join(s + ':' for s in CONTROLLER_SCHEMES)})")


def _string_list(value):
    if value is None:
        return []
    if isinstance(value, str):
        # The coordinator carries only scalar parameters: the export sends the list as one
        # space-separated string (no hwprobe URI has a space).
        return value.split()
    return [str(item) for item in value]


@target_factory.reg_resource
@attr.s(eq=False)
class HwprobeBench(Resource):
    """A bench on this host.

    Args:
        controller (str): the BLE controller as an hwprobe HCI URI (`hci:0`, `uart:/dev/ttyACM0`,
            `tcp:127.0.0.1:9101`, `sim:`)
        binary (str): the hwprobe executable (a path, or a name looked up in PATH)
        devices (list): other device URIs of the bench that tests may use (`v4l2:/dev/video0`,
            `usb:045e:028e`, ...), a list or one space-separated string; published as they are,
            hwprobe checks them when it opens them
        timeout (float): default seconds a command may take before it is killed
    """

    controller = attr.ib(validator=_controller_uri)
    binary = attr.ib(default="hwprobe", validator=attr.validators.instance_of(str))
    devices = attr.ib(default=attr.Factory(list), converter=_string_list)
    timeout = attr.ib(default=120.0, converter=float)


    def resolved_binary(self) -> str | None:
        """The executable's absolute path on this host, or None when there is none."""
        if os.sep in self.binary:
            path = os.path.abspath(self.binary)
            return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
        return shutil.which(self.binary)

    def poll(self):
        super().poll()
        # Available while there is an hwprobe to run: the exporter publishes this, so a place
        # whose bench lost its binary is not handed out.
        self.avail = self.resolved_binary() is not None


@target_factory.reg_resource
@attr.s(eq=False)
class NetworkHwprobeBench(NetworkResource):
    """A bench on an exporter host, as a client sees it (made by the exporter's HwprobeBenchExport).

    Args:
        host (str): the exporter host the commands run on
        controller, binary, devices, timeout: as in HwprobeBench (binary as resolved there)
    """

    controller = attr.ib(validator=_controller_uri)
    binary = attr.ib(default="hwprobe", validator=attr.validators.instance_of(str))
    devices = attr.ib(default=attr.Factory(list), converter=_string_list)
    timeout = attr.ib(default=120.0, converter=float)

    def __attrs_post_init__(self):
        checked_host(self.host)
        super().__attrs_post_init__()
