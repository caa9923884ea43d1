"""Control-channel commands for a peer with a `PairingAgent` (see ../README.md, "Pairing").

`pairing_commands(agent, current_connection)` returns `{name: handler(request) -> dict}` for a
control server: `pairing` (options), `pairing_fault`, `passkey`, `compare`, `security_request`,
`security`, `bonds`. `current_connection` is a callable giving the link a command acts on.
The `events` and `subscribe` commands are the control server's own (they read the EventLog).
"""
from __future__ import annotations

from .pairing import PairingAgent, PairingFault, parse_passkey
from .pairing_central import parse_address


def pairing_commands(agent: PairingAgent, current_connection) -> dict:
    def pairing(request: dict) -> dict:
        agent.options.update({k: v for k, v in request.items() if k != "cmd"})
        return {"pairing": agent.state()}

    def pairing_fault(request: dict) -> dict:
        if request.get("fault") == "clear":
            agent.clear_faults()
        else:
            agent.add_fault(PairingFault.parse(request))
        return {"faults": [f.describe() for f in agent.faults]}

    def passkey(request: dict) -> dict:
        value = parse_passkey(request.get("passkey", request.get("value")))
        if value is None:
            raise ValueError("passkey: give {\"passkey\": N} (0 to 999999)")
        return {"delivered": agent.enter_passkey(value)}

    def compare(request: dict) -> dict:
        accepted = request.get("accept", request.get("accepted"))
        if not isinstance(accepted, bool):
            raise ValueError("compare: give {\"accept\": true|false}")
        return {"delivered": agent.answer(accepted)}

    def security_request(request: dict) -> dict:
        connection = current_connection()
        if connection is None:
            raise RuntimeError("not connected")
        agent.device.request_pairing(connection)
        return {}

    def security(request: dict) -> dict:
        return {"security": agent.link_security(current_connection()).describe()}

    def bonds(request: dict) -> dict:
        removed = None
        target = request.get("remove")
        if target is not None:
            removed = agent.bonds.remove(None if target == "all" else parse_address(target))
        return {"bonds": agent.bonds.describe(agent.options.reveal_keys), "removed": removed}

    return {"pairing": pairing, "pairing_fault": pairing_fault, "passkey": passkey, "compare": compare,
            "security_request": security_request, "security": security, "bonds": bonds}
