"""A LocalLink whose LE ACL routing uses the connection's own address.

Stock bumble 0.0.236 tags every LE ACL PDU with the *sender controller's random address*;
the receiving controller then looks the connection up by that address. A central that
connected with its public address (own_address_type = public, what a from-scratch host
usually does) therefore gets no data through in either direction. Here the source address
is taken from the sender's connection to the destination, which is the address the other
side keyed its connection under.
"""
from __future__ import annotations

import asyncio
import logging

from bumble import core, hci
from bumble.link import LocalLink

log = logging.getLogger("peer.link")


class ConnectionAddressedLink(LocalLink):
    def send_acl_data(self, sender_controller, destination_address: hci.Address,
                      transport: core.PhysicalTransport, data: bytes) -> None:
        if transport != core.PhysicalTransport.LE:
            super().send_acl_data(sender_controller, destination_address, transport, data)
            return
        connection = sender_controller.le_connections.get(destination_address)
        source = connection.self_address if connection is not None else sender_controller.random_address
        receiver = self.find_le_controller(destination_address)
        if receiver is None:
            log.debug("no controller for %s, dropping %d bytes", destination_address, len(data))
            return
        asyncio.get_running_loop().call_soon(receiver.on_link_acl_data, source, transport, data)
