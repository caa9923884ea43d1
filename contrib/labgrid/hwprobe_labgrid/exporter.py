"""Publishing a bench from an exporter.

labgrid's exporter picks the export class of each resource in its YAML from the module-level
`exports` table of `labgrid.remote.exporter`, which only knows labgrid's own classes; a class not
in it is passed on unchecked under its own name. There is no plugin hook, so
`hwprobe-labgrid-exporter` is labgrid's exporter with one more entry in that table: it takes the
same arguments as `labgrid-exporter`.
"""

from __future__ import annotations

import attr
from labgrid.remote import exporter as labgrid_exporter

from .resource import HwprobeBench


@attr.s(eq=False)
class HwprobeBenchExport(labgrid_exporter.ResourceExport):
    """Exports an HwprobeBench as a NetworkHwprobeBench on this exporter's host.

    Nothing has to be started for it (no ser2net-like helper): a client runs hwprobe on this host
    over SSH. The export is available while the binary is there; `binary` is published as its
    absolute path, so the client runs exactly the executable the exporter checked.
    """

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.data["cls"] = "NetworkHwprobeBench"
        self.local = HwprobeBench(target=None, name=None, **self.local_params)

    def _get_params(self):
        return {
            "host": self.host,
            "controller": self.local.controller,
            "binary": self.local.resolved_binary() or self.local.binary,
            "devices": " ".join(self.local.devices),
            "timeout": self.local.timeout,
        }


def register():
    """Adds the export to labgrid's table (idempotent)."""
    labgrid_exporter.exports["HwprobeBench"] = HwprobeBenchExport


def main():
    register()
    labgrid_exporter.main()


if __name__ == "__main__":
    main()
