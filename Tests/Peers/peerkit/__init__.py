"""Building blocks of the independent BLE test peer (see ../README.md).

Everything here is written against bumble 0.0.236 (pinned in ../requirements.txt): the
workarounds reach into bumble's controller and link internals.
"""
