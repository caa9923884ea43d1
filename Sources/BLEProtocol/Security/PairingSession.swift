import HAL

/// One pairing's working state inside a ``SecurityManager``: the two sides' features, the method,
/// and the values of the phase it is in. Gone when the pairing completes or fails.
struct PairingSession: Sendable {
    enum Stage: Hashable, Sendable {
        /// Initiator: Pairing Request sent.
        case awaitingResponse
        /// Secure Connections: public keys being exchanged.
        case exchangingPublicKeys
        /// Authentication stage 1: confirm and random values (legacy, or SC's JW/NC/passkey rounds).
        case confirming
        /// SC authentication stage 2: the user's answer and the DHKey checks.
        case checkingDHKey
        /// The link is being encrypted with the STK or the new LTK.
        case encrypting
        /// Phase 3: keys being sent and received.
        case distributing
    }

    /// Whether we are the initiator (central).
    let isInitiator: Bool
    var stage: Stage
    /// The Pairing Request as sent or received (`preq`, and the initiator's features).
    var request: PairingFeatures
    /// The Pairing Response (`pres`, and the responder's features), once known.
    var response: PairingFeatures?

    var method = PairingMethod.justWorks
    var secureConnections = false
    var keySize = 16
    /// Both sides set Bonding: keys are distributed and kept.
    var bonding = false

    // The user's part.
    var passkey: UInt32?
    var awaitingPasskey = false
    var awaitingComparison = false
    /// The user accepted the numeric comparison (Just Works and passkey: true once reached).
    var userConfirmed = false

    // Confirm/random exchange, legacy and Secure Connections alike.
    var localNonce: SecurityKey?
    var peerConfirm: SecurityKey?
    var peerNonce: SecurityKey?
    var sentConfirm = false
    var sentNonce = false

    // Legacy.
    var tk: SecurityKey?

    // Secure Connections.
    var keyPair: P256KeyPair?
    var peerPublicKey: P256PublicKey?
    var dhKey: [UInt8]?
    /// Passkey Entry's round, 0..<20 (one per passkey bit).
    var round = 0
    var macKey: SecurityKey?
    /// Responder: the initiator's Ea, when it came before our user answered.
    var peerCheck: SecurityKey?
    /// Initiator: the Eb the responder must send, computed with Ea.
    var expectedPeerCheck: SecurityKey?
    var sentCheck = false

    /// The key the link is encrypted with to finish the pairing (STK, or SC's LTK).
    var encryptionKey: SecurityKey?

    // Phase 3.
    var peerSends: KeyDistribution = []
    var weSend: KeyDistribution = []
    var receivedLTK: SecurityKey?
    var receivedCentralIdentification: (ediv: UInt16, rand: UInt64)?
    var receivedIRK: SecurityKey?
    var receivedIdentity: BLEAddress?
    /// Key PDUs that came while our side still waited for the Encryption Change.
    var earlyKeys: [SMPPDU] = []
    /// The kinds of key PDU each side sent in phase 3, in order (for cassettes: never values).
    var sentKinds: [String] = []
    var receivedKinds: [String] = []
    /// The legacy LTK we sent, to answer LTK Requests with later.
    var sentKey: EncryptionKey?

    init(isInitiator: Bool, stage: Stage, request: PairingFeatures) {
        self.isInitiator = isInitiator
        self.stage = stage
        self.request = request
    }

    /// Starts a new confirm/random round (SC Passkey Entry has 20).
    mutating func resetRound() {
        localNonce = nil
        peerConfirm = nil
        peerNonce = nil
        sentConfirm = false
        sentNonce = false
    }

    /// Everything the peer was to send has come.
    var receivedEverything: Bool {
        (!peerSends.contains(.encryptionKey) || receivedCentralIdentification != nil)
            && (!peerSends.contains(.identityKey) || receivedIdentity != nil)
    }
}
