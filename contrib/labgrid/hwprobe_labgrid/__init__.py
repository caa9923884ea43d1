"""labgrid support for hwprobe benches (issue 19): the HwprobeBench / NetworkHwprobeBench
resources, the exporter's HwprobeBenchExport and the HwprobeDriver.

Importing this package registers the resources and the driver with labgrid's target factory (an
environment YAML lists it under `imports:`); the export is registered by
`hwprobe-labgrid-exporter`, or by `hwprobe_labgrid.exporter.register()`.
"""

from .driver import (CheckOutcome, HwprobeDeviceError, HwprobeDriver, HwprobeError, HwprobeFailed,
                     HwprobeTransportError, HwprobeUsageError)
from .resource import HwprobeBench, NetworkHwprobeBench

__all__ = [
    "CheckOutcome",
    "HwprobeBench",
    "HwprobeDeviceError",
    "HwprobeDriver",
    "HwprobeError",
    "HwprobeFailed",
    "HwprobeTransportError",
    "HwprobeUsageError",
    "NetworkHwprobeBench",
]
