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
    /// The numeric comparison with a way out: true the numbers match, false they do not (0x0C
    /// Numeric Comparison Failed), nil the person cancelled (0x08 Unspecified Reason).
    func compare(_ value: UInt32, peer: BLEAddress) async -> Bool?
    /// How securing a central's link on its own ended (``CentralSecurityPolicy``): a command that
    /// paired without being asked to says so.
    func secured(_ outcome: SecuringOutcome, peer: BLEAddress) async
}

extension PairingDelegate {
    /// Nobody is told by default.
    package func secured(_ outcome: SecuringOutcome, peer: BLEAddress) async {}

    /// Without a way to cancel, the comparison is `confirm`'s answer.
    package func compare(_ value: UInt32, peer: BLEAddress) async -> Bool? { await confirm(value, peer: peer) }
}

/// When the host secures a central's link without being asked link by link: what `gatt`,
/// `weigh`, `scan` and `check` do (hwprobe-cli.md, third edition). `pair` asks for itself.
package struct CentralSecurityPolicy: Hashable, Sendable {
    /// On connecting, a device with a bond is encrypted with its key (no pairing).
    package var encryptsBondedOnConnect: Bool
    /// On connecting, the device is paired first, bond or not (`--pair`).
    package var pairsOnConnect: Bool
    /// A request refused with 0x05, 0x0C or 0x0F secures the link (``SecurityRemedy``) and is sent once more.
    package var remediesRefusals: Bool

    package init(encryptsBondedOnConnect: Bool, pairsOnConnect: Bool, remediesRefusals: Bool) {
        self.encryptsBondedOnConnect = encryptsBondedOnConnect
        self.pairsOnConnect = pairsOnConnect
        self.remediesRefusals = remediesRefusals
    }

    /// Nothing on its own: the caller secures links with `HCIHost.secure` (`pair`, `serve`).
    package static let manual = CentralSecurityPolicy(encryptsBondedOnConnect: false, pairsOnConnect: false, remediesRefusals: false)
    /// Bonds used on connect, refusals remedied; `pairFirst` pairs on connect too.
    package static func automatic(pairFirst: Bool) -> CentralSecurityPolicy {
        CentralSecurityPolicy(encryptsBondedOnConnect: true, pairsOnConnect: pairFirst, remediesRefusals: true)
    }
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
    /// What the host does on its own on a central's links.
    package var central: CentralSecurityPolicy

    package init(configuration: SecurityConfiguration, bonds: any BondKeeper, delegate: any PairingDelegate,
                 central: CentralSecurityPolicy = .manual) {
        self.configuration = configuration
        self.bonds = bonds
        self.delegate = delegate
        self.central = central
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
