import BLEProtocol
import HAL

/// The person at the keyboard during a pairing: the Security Manager's prompts reach them here.
/// The host calls it off its own actor and feeds the answer back to the link's Security Manager,
/// so a slow person never stalls the host (the 30 s SMP timeout still applies).
package protocol PairingDelegate: Sendable {
    /// Show this passkey (six digits, leading zeros kept); the peer's user types it.
    func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async
    /// The passkey the peer shows (or the one agreed); nil: the user cancelled.
    func passkey(for peer: BLEAddress) async -> UInt32?
    /// Whether the peer shows this same number (numeric comparison); false refuses the pairing.
    func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool
}

/// Where the host finds and keeps bonds (keys by identity address): the bond store, or a test's
/// dictionary. `keep` is called only for a pairing that succeeded and bonded.
package protocol BondKeeper: Sendable {
    /// The bond of the device seen at `address` (identity or resolvable private address).
    func bond(for address: BLEAddress) -> Bond?
    /// Keeps `bond`, replacing the device's old one. Throws a message saying what to do.
    func keep(_ bond: Bond) throws(BondStoreError)
}

/// What the host needs to pair and encrypt: what this side offers, where bonds live, and who
/// answers the prompts. Without it the host pairs with nobody (Pairing Not Supported).
package struct HostSecurity: Sendable {
    package var configuration: SecurityConfiguration
    package var bonds: any BondKeeper
    package var delegate: any PairingDelegate

    package init(configuration: SecurityConfiguration, bonds: any BondKeeper, delegate: any PairingDelegate) {
        self.configuration = configuration
        self.bonds = bonds
        self.delegate = delegate
    }
}

/// How securing a link ended, for `HCIHost.secure(_:pair:authenticated:)` and the peripheral
/// role's events.
package enum SecuringOutcome: Hashable, Sendable {
    /// A pairing finished; its bond (if any) is already kept.
    case paired(PairingOutcome)
    /// The link is encrypted with a bond's key, without pairing.
    case encrypted(LinkSecurity)
    /// The pairing failed; nothing was kept.
    case failed(PairingFailure)
    /// Encrypting with the bond's key failed with this HCI status (0x06: the peer forgot the bond).
    case bondRejected(status: UInt8)
    /// The pairing succeeded but its bond could not be written: why, and what to do.
    case notStored(PairingOutcome, String)
}
