import BLEProtocol
import HAL
import Testing

/// Our Security Manager's two roles paired against each other, for every method of both
/// pairings, judged from what each side did (the PDUs on the link, the prompts, the keys kept)
/// rather than from flags either side sets about itself.
@Suite struct SecurityManagerPairingTests {
    typealias Side = PairingHarness.Side

    static func config(_ io: IOCapability, mitm: Bool = true, legacy: Bool = false, bondable: Bool = true,
                       identity: LocalIdentity? = nil) -> SecurityConfiguration {
        SecurityConfiguration(ioCapability: io, bondable: bondable, requiresMITM: mitm,
                              secureConnections: legacy ? .legacyOnly : .preferred, localIdentity: identity)
    }

    static let centralIdentity = LocalIdentity(irk: SecurityKey(number: 0xC0FFEE), address: BLEAddress(bytes: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55])!)
    static let peripheralIdentity = LocalIdentity(irk: SecurityKey(number: 0xBEEF), address: BLEAddress(bytes: [0xC1, 0x22, 0x33, 0x44, 0x55, 0x66], kind: .random)!)

    /// Pairs a central with `centralIO` and a peripheral with `peripheralIO`, both asking for MITM
    /// (so the IO table decides), and checks both ended paired with the same key and method.
    static func pair(_ centralIO: IOCapability, _ peripheralIO: IOCapability, legacy: Bool,
                     mitm: Bool = true) throws -> PairingHarness {
        var link = PairingHarness(central: config(centralIO, mitm: mitm, legacy: legacy, identity: centralIdentity),
                                  peripheral: config(peripheralIO, mitm: mitm, legacy: legacy, identity: peripheralIdentity))
        link.run(.pair, on: .central)
        let central = try #require(link.outcome(.central), "central: \(String(describing: link.failure(.central)))")
        let peripheral = try #require(link.outcome(.peripheral), "peripheral: \(String(describing: link.failure(.peripheral)))")
        #expect(central.method == peripheral.method)
        #expect(central.security == peripheral.security)
        #expect(central.security.isSecureConnections == !legacy)
        #expect(link.central.security == central.security)
        #expect(link.peripheral.security == peripheral.security)
        #expect(!link.central.isPairing && !link.peripheral.isPairing && link.central.deadline == nil)
        return link
    }

    // MARK: Every method, both pairings

    @Test(arguments: [false, true])
    func justWorks(legacy: Bool) throws {
        let link = try Self.pair(.noInputNoOutput, .noInputNoOutput, legacy: legacy, mitm: false)
        let outcome = try #require(link.outcome(.central))
        #expect(outcome.method == .justWorks)
        #expect(!outcome.security.isAuthenticated && outcome.security.level == 2)
        #expect(link.displayed.isEmpty && link.compared.isEmpty)
        // Legacy: Request, Confirm, Random, then the keys; SC: the public keys, one confirm, two randoms.
        if legacy {
            #expect(link.sent(by: .central).prefix(3) == ["Pairing Request", "Pairing Confirm", "Pairing Random"])
            #expect(link.sent(by: .peripheral).prefix(3) == ["Pairing Response", "Pairing Confirm", "Pairing Random"])
        } else {
            #expect(link.sent(by: .central).prefix(4) == ["Pairing Request", "Pairing Public Key", "Pairing Random", "Pairing DHKey Check"])
            #expect(link.sent(by: .peripheral).prefix(5) == ["Pairing Response", "Pairing Public Key", "Pairing Confirm", "Pairing Random", "Pairing DHKey Check"])
        }
    }

    @Test(arguments: [false, true])
    func passkeyShownByThePeripheral(legacy: Bool) throws {
        let link = try Self.pair(.keyboardOnly, .displayOnly, legacy: legacy)
        #expect(link.outcome(.central)?.method == .passkeyEntry(.responder))
        #expect(link.displayed[.peripheral] != nil && link.displayed[.central] == nil)
        #expect(link.outcome(.central)?.security.isAuthenticated == true)
        #expect(link.outcome(.central)?.security.level == (legacy ? 3 : 4))
        if !legacy {
            // Twenty rounds, one per passkey bit: 20 confirms and 20 randoms each way.
            #expect(link.sent(by: .central).filter { $0 == "Pairing Confirm" }.count == 20)
            #expect(link.sent(by: .peripheral).filter { $0 == "Pairing Random" }.count == 20)
        }
    }

    @Test(arguments: [false, true])
    func passkeyShownByTheCentral(legacy: Bool) throws {
        let link = try Self.pair(.displayOnly, .keyboardOnly, legacy: legacy)
        #expect(link.outcome(.peripheral)?.method == .passkeyEntry(.initiator))
        #expect(link.displayed[.central] != nil && link.displayed[.peripheral] == nil)
    }

    @Test(arguments: [false, true])
    func passkeyTypedOnBothSides(legacy: Bool) throws {
        let link = try Self.pair(.keyboardOnly, .keyboardOnly, legacy: legacy)
        #expect(link.outcome(.central)?.method == .passkeyEntry(.neither))
        #expect(link.displayed.isEmpty)
    }

    @Test func numericComparison() throws {
        let link = try Self.pair(.displayYesNo, .keyboardDisplay, legacy: false)
        #expect(link.outcome(.central)?.method == .numericComparison)
        let shown = try #require(link.compared[.central])
        #expect(link.compared[.peripheral] == shown)
        #expect(shown < 1_000_000)
    }

    /// The responder's user answers after the initiator's DHKey Check has arrived (bumble's
    /// central answers at once; a person here is slower): the responder checks Ea only then.
    @Test(arguments: [Side.peripheral, .central])
    func numericComparisonAnsweredAfterThePeersCheckArrived(_ late: Side) throws {
        var link = PairingHarness(central: Self.config(.displayYesNo), peripheral: Self.config(.displayYesNo))
        link.answersLate = [late]
        link.run(.pair, on: .central)
        let central = try #require(link.outcome(.central), "central: \(String(describing: link.failure(.central)))")
        let peripheral = try #require(link.outcome(.peripheral), "peripheral: \(String(describing: link.failure(.peripheral)))")
        #expect(central.method == .numericComparison && peripheral.method == .numericComparison)
        #expect(link.compared[.central] == link.compared[.peripheral])
    }

    @Test func numericComparisonsCellIsAPasskeyInLegacyPairing() throws {
        // DisplayYesNo central, KeyboardDisplay peripheral: legacy has no Numeric Comparison,
        // and Table 2.8 has the initiator display.
        let link = try Self.pair(.displayYesNo, .keyboardDisplay, legacy: true)
        #expect(link.outcome(.central)?.method == .passkeyEntry(.initiator))
    }

    @Test func legacyWhenOnlyOneSideHasSecureConnections() throws {
        var link = PairingHarness(central: Self.config(.keyboardDisplay), peripheral: Self.config(.displayOnly, legacy: true))
        link.run(.pair, on: .central)
        #expect(link.outcome(.central)?.security.isSecureConnections == false)
        #expect(!link.sent(by: .central).contains("Pairing Public Key"))
    }

    @Test func passkeyZeroIsAPasskey() throws {
        var link = PairingHarness(central: Self.config(.keyboardOnly), peripheral: Self.config(.keyboardOnly))
        link.agreedPasskey = 0
        link.run(.pair, on: .central)
        #expect(link.outcome(.central)?.method == .passkeyEntry(.neither))
    }

    // MARK: Keys

    @Test func secureConnectionsBondsHoldOneKeyBothWaysAndTheIdentities() throws {
        let link = try Self.pair(.keyboardDisplay, .displayOnly, legacy: false)
        let atCentral = try #require(link.outcome(.central)?.bond)
        let atPeripheral = try #require(link.outcome(.peripheral)?.bond)
        #expect(atCentral.centralKey == atPeripheral.peripheralKey)
        #expect(atCentral.centralKey == atCentral.peripheralKey)
        #expect(atCentral.centralKey?.ediv == 0 && atCentral.centralKey?.rand == 0)
        #expect(atCentral.identity == Self.peripheralIdentity.address && atCentral.irk == Self.peripheralIdentity.irk)
        #expect(atPeripheral.identity == Self.centralIdentity.address && atPeripheral.irk == Self.centralIdentity.irk)
        #expect(atCentral.isAuthenticated && atCentral.isSecureConnections && atCentral.keySize == 16)
        #expect(link.outcome(.central)?.keyNames == ["ltk", "irk"])
        #expect(link.outcome(.peripheral)?.sentKeyKinds == ["irk", "identity-address"])
        #expect(link.outcome(.peripheral)?.receivedKeyKinds == ["irk", "identity-address"])
        // No LTK travels in Secure Connections; no CSRK ever.
        #expect(!link.sent(by: .central).contains("Encryption Information"))
        #expect(!link.sent(by: .peripheral).contains("Signing Information"))
    }

    /// Legacy bonds hold two keys, one per direction: what the peer sent encrypts as central,
    /// what we sent answers as peripheral; each side's pair mirrors the other's.
    @Test func legacyBondsKeepEachDirectionsKey() throws {
        let link = try Self.pair(.keyboardDisplay, .displayOnly, legacy: true)
        let atCentral = try #require(link.outcome(.central)?.bond)
        let atPeripheral = try #require(link.outcome(.peripheral)?.bond)
        #expect(atCentral.centralKey == atPeripheral.peripheralKey)
        #expect(atCentral.peripheralKey == atPeripheral.centralKey)
        #expect(atCentral.centralKey != atCentral.peripheralKey)
        #expect(link.sent(by: .peripheral).suffix(4) == ["Encryption Information", "Central Identification", "Identity Information", "Identity Address Information"])
        #expect(link.sent(by: .central).suffix(4) == ["Encryption Information", "Central Identification", "Identity Information", "Identity Address Information"])
        // Each side's outcome says which kinds it sent and received, for a recording on that side.
        let all = ["ltk", "ediv-rand", "irk", "identity-address"]
        #expect(link.outcome(.peripheral)?.sentKeyKinds == all && link.outcome(.peripheral)?.receivedKeyKinds == all)
        #expect(link.outcome(.central)?.sentKeyKinds == all && link.outcome(.central)?.receivedKeyKinds == all)
    }

    @Test(arguments: [false, true])
    func keysArrivingBeforeOurEncryptionChangeAreKept(legacy: Bool) throws {
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false, legacy: legacy, identity: Self.centralIdentity),
                                  peripheral: Self.config(.noInputNoOutput, mitm: false, legacy: legacy, identity: Self.peripheralIdentity))
        link.centralLearnsEncryptionLate = true
        link.run(.pair, on: .central)
        let atCentral = try #require(link.outcome(.central)?.bond, "\(String(describing: link.failure(.central)))")
        #expect(atCentral.identity == Self.peripheralIdentity.address)
        #expect(atCentral.centralKey == link.outcome(.peripheral)?.bond?.peripheralKey)
    }

    @Test func nothingIsKeptWhenEitherSideDoesNotBond() throws {
        for (centralBonds, peripheralBonds) in [(true, false), (false, true)] {
            var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false, bondable: centralBonds),
                                      peripheral: Self.config(.noInputNoOutput, mitm: false, bondable: peripheralBonds))
            link.run(.pair, on: .central)
            #expect(link.outcome(.central) != nil && link.outcome(.central)?.bond == nil)
            #expect(link.outcome(.peripheral) != nil && link.outcome(.peripheral)?.bond == nil)
            #expect(link.central.bond == nil && link.peripheral.bond == nil)
        }
    }

    @Test(arguments: [false, true])
    func aSmallerKeySizeIsAgreedAndMasked(legacy: Bool) throws {
        var small = Self.config(.displayOnly, legacy: legacy)
        small.maximumKeySize = 10
        var link = PairingHarness(central: Self.config(.keyboardDisplay, legacy: legacy), peripheral: small)
        link.run(.pair, on: .central)
        let outcome = try #require(link.outcome(.central))
        #expect(outcome.security.keySize == 10 && link.peripheral.security.keySize == 10)
        // Authenticated, but level 4 needs a 16-byte key.
        #expect(outcome.security.level == 3)
        let key = try #require(outcome.bond?.centralKey?.ltk)
        #expect(key.bytes.prefix(6).allSatisfy { $0 == 0 })
    }

    // MARK: Reconnection with a bond

    @Test(arguments: [false, true])
    func aBondEncryptsTheNextLinkWithoutPairing(legacy: Bool) throws {
        let first = try Self.pair(.keyboardDisplay, .displayOnly, legacy: legacy)
        var next = PairingHarness(central: Self.config(.keyboardDisplay, legacy: legacy), peripheral: Self.config(.displayOnly, legacy: legacy),
                                  centralBond: first.outcome(.central)?.bond, peripheralBond: first.outcome(.peripheral)?.bond)
        next.run(.secure(authenticated: true), on: .central)
        #expect(next.traffic.isEmpty, "no SMP PDU: an encryption, not a pairing")
        #expect(next.central.security == first.central.security)
        #expect(next.peripheral.security == first.peripheral.security)
        #expect(next.central.security.isAuthenticated)
    }

    @Test func aSecurityRequestIsAnsweredWithTheBondsKey() throws {
        let first = try Self.pair(.keyboardDisplay, .displayOnly, legacy: true)
        var next = PairingHarness(central: Self.config(.keyboardDisplay, legacy: true), peripheral: Self.config(.displayOnly, legacy: true),
                                  centralBond: first.outcome(.central)?.bond, peripheralBond: first.outcome(.peripheral)?.bond)
        next.run(.requestSecurity, on: .peripheral)
        #expect(next.traffic.map(\.1.name) == ["Security Request"])
        #expect(next.central.security.isEncrypted && next.peripheral.security.isEncrypted)
    }

    @Test func aPeerThatLostTheBondIsReported() throws {
        let first = try Self.pair(.keyboardDisplay, .displayOnly, legacy: false)
        var next = PairingHarness(central: Self.config(.keyboardDisplay), peripheral: Self.config(.displayOnly),
                                  centralBond: first.outcome(.central)?.bond, peripheralBond: nil)
        next.run(.secure(authenticated: false), on: .central)
        #expect(next.centralEffects.contains(.bondEncryptionFailed(status: 0x06)))
        #expect(!next.central.security.isEncrypted)
        #expect(next.peripheralEffects.contains(.rejectLTKRequest))
    }

    @Test func anUnauthenticatedBondIsNotEnoughForAuthentication() throws {
        let first = try Self.pair(.noInputNoOutput, .noInputNoOutput, legacy: false, mitm: false)
        var next = PairingHarness(central: Self.config(.keyboardDisplay, mitm: false), peripheral: Self.config(.displayOnly, mitm: false),
                                  centralBond: first.outcome(.central)?.bond, peripheralBond: first.outcome(.peripheral)?.bond)
        next.run(.secure(authenticated: true), on: .central)
        #expect(next.sent(by: .central).first == "Pairing Request")
        #expect(next.outcome(.central)?.method == .passkeyEntry(.responder))
        #expect(next.central.bond?.isAuthenticated == true)
    }

    // MARK: Failures

    @Test(arguments: [false, true])
    func aWrongPasskeyFailsBothSidesWithConfirmValueFailedAndKeepsNothing(legacy: Bool) throws {
        var link = PairingHarness(central: Self.config(.keyboardOnly, legacy: legacy), peripheral: Self.config(.displayOnly, legacy: legacy))
        link.typedPasskey[.central] = 111_111
        link.run(.pair, on: .central)
        let displayed = try #require(link.displayed[.peripheral])
        try #require(displayed != 111_111)
        #expect(link.failure(.peripheral)?.cause == .sent(.confirmValueFailed))
        #expect(link.failure(.central)?.cause == .received(.confirmValueFailed))
        #expect(link.outcome(.central) == nil && link.outcome(.peripheral) == nil)
        #expect(link.central.bond == nil && link.peripheral.bond == nil)
        #expect(!link.central.security.isEncrypted)
        #expect(link.failure(.central)?.description.hasPrefix("Pairing Failed: 0x04 Confirm Value Failed") == true)
    }

    @Test func aRefusedNumericComparisonFailsWithNumericComparisonFailed() throws {
        var link = PairingHarness(central: Self.config(.displayYesNo), peripheral: Self.config(.displayYesNo))
        link.comparisonAnswer[.peripheral] = false
        link.run(.pair, on: .central)
        #expect(link.failure(.peripheral)?.cause == .sent(.numericComparisonFailed))
        #expect(link.failure(.central)?.cause == .received(.numericComparisonFailed))
        #expect(link.outcome(.central) == nil)
    }

    @Test func aCancelAtThePromptFailsWithUnspecifiedReason() throws {
        var link = PairingHarness(central: Self.config(.keyboardOnly), peripheral: Self.config(.displayOnly))
        link.typingUsers = []
        link.run(.pair, on: .central)
        #expect(link.central.isPairing && link.displayed[.peripheral] != nil)
        link.run(.userCancelled, on: .central)
        #expect(link.failure(.central)?.cause == .sent(.unspecified))
        #expect(link.failure(.peripheral)?.cause == .received(.unspecified))
        #expect(!link.central.isPairing && !link.peripheral.isPairing)
        #expect(link.central.bond == nil && link.peripheral.bond == nil)
    }

    @Test func aRequiredMITMIsEnforcedAsResponder() throws {
        // bumble's stock responder goes on with Just Works even when it asked for MITM; ours refuses.
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false), peripheral: Self.config(.displayYesNo, mitm: true))
        link.run(.pair, on: .central)
        #expect(link.failure(.peripheral)?.cause == .sent(.authenticationRequirements))
        #expect(link.failure(.central)?.cause == .received(.authenticationRequirements))
        #expect(link.sent(by: .peripheral) == ["Pairing Failed"])
    }

    @Test func secureConnectionsOnlyRefusesALegacyPeer() throws {
        var strict = Self.config(.noInputNoOutput, mitm: false)
        strict.secureConnections = .only
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false, legacy: true), peripheral: strict)
        link.run(.pair, on: .central)
        #expect(link.failure(.peripheral)?.cause == .sent(.authenticationRequirements))
    }

    @Test func pairingOffIsPairingNotSupported() throws {
        var off = Self.config(.noInputNoOutput, mitm: false)
        off.acceptsPairing = false
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false), peripheral: off)
        link.run(.pair, on: .central)
        #expect(link.failure(.central)?.cause == .received(.pairingNotSupported))
    }

    @Test func aResponseOfferingACSRKIsRefused() throws {
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false), peripheral: Self.config(.noInputNoOutput, mitm: false))
        link.tamper = { side, pdu in
            guard side == .peripheral, case .pairingResponse(var features) = pdu else { return pdu }
            features.responderKeys.insert(.signingKey)
            return .pairingResponse(features)
        }
        link.run(.pair, on: .central)
        #expect(link.failure(.central)?.cause == .sent(.invalidParameters))
    }

    @Test func aRequestAskingForCSRKsGetsNone() throws {
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false), peripheral: Self.config(.noInputNoOutput, mitm: false))
        link.tamper = { side, pdu in
            guard side == .central, case .pairingRequest(var features) = pdu else { return pdu }
            features.initiatorKeys.insert(.signingKey)
            features.responderKeys.insert(.signingKey)
            return .pairingRequest(features)
        }
        link.run(.pair, on: .central)
        let response = link.traffic.first { $0.1.name == "Pairing Response" }?.1
        guard case .pairingResponse(let features) = response else { Issue.record("no response"); return }
        #expect(!features.responderKeys.contains(.signingKey) && !features.initiatorKeys.contains(.signingKey))
    }

    @Test func aPrivateAddressGivenAsIdentityIsKeyRejected() throws {
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false, identity: Self.centralIdentity),
                                  peripheral: Self.config(.noInputNoOutput, mitm: false, identity: Self.peripheralIdentity))
        link.tamper = { side, pdu in
            guard side == .peripheral, case .identityAddressInformation = pdu else { return pdu }
            return .identityAddressInformation(BLEAddress(bytes: [0x40, 1, 2, 3, 4, 5], kind: .random)!)
        }
        link.run(.pair, on: .central)
        #expect(link.failure(.central)?.cause == .sent(.keyRejected))
        #expect(link.central.bond == nil)
    }

    @Test func aShortKeyBelowTheMinimumIsEncryptionKeySize() throws {
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false), peripheral: Self.config(.noInputNoOutput, mitm: false))
        link.tamper = { side, pdu in
            guard side == .central, case .pairingRequest(var features) = pdu else { return pdu }
            features.maximumKeySize = 6
            return .pairingRequest(features)
        }
        link.run(.pair, on: .central)
        #expect(link.failure(.peripheral)?.cause == .sent(.encryptionKeySize))
    }

    @Test func malformedAndUnknownPDUsAreAnswered() throws {
        var peripheral = SecurityManager(role: .peripheral, configuration: Self.config(.noInputNoOutput), localAddress: PairingHarness.peripheralAddress,
                                         peerAddress: PairingHarness.centralAddress)
        #expect(peripheral.handle(.received([0x20]), now: .zero) == [.send(.pairingFailed(.commandNotSupported))])
        #expect(peripheral.handle(.received([0x01, 0x03, 0x00]), now: .zero) == [.send(.pairingFailed(.invalidParameters))])
        // Never a Pairing Failed in answer to a Pairing Failed, however it looks.
        #expect(peripheral.handle(.received([0x05]), now: .zero).allSatisfy { if case .send = $0 { false } else { true } })
        #expect(peripheral.handle(.received([0x0B, 0x01]), now: .zero) == [.send(.pairingFailed(.commandNotSupported))])
    }

    @Test func theRepeatedAttemptsRuleRefusesAQuickRetry() throws {
        var link = PairingHarness(central: Self.config(.keyboardOnly), peripheral: Self.config(.displayOnly))
        link.typedPasskey[.central] = 111_111
        link.run(.pair, on: .central)
        #expect(link.failure(.peripheral)?.reason == .confirmValueFailed)
        link.clearRecords()
        // Right away: the peripheral answers Repeated Attempts; the central refuses to start too.
        link.now = .seconds(1)
        link.run(.pair, on: .central)
        #expect(link.failure(.central)?.cause == .refused(.repeatedAttempts))
        link.clearRecords()
        var fresh = PairingHarness(central: Self.config(.keyboardOnly), peripheral: Self.config(.displayOnly))
        fresh.peripheral = link.peripheral
        fresh.now = .seconds(1)
        fresh.run(.pair, on: .central)
        #expect(fresh.failure(.central)?.cause == .received(.repeatedAttempts))
        // After the wait a correct passkey pairs.
        link.clearRecords()
        link.now = .seconds(3)
        link.typedPasskey = [:]
        link.run(.pair, on: .central)
        #expect(link.outcome(.central) != nil, "\(String(describing: link.failure(.central)))")
    }

    // MARK: Time

    @Test func aPeerThatFallsSilentTimesOutAfter30Seconds() throws {
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false), peripheral: Self.config(.noInputNoOutput, mitm: false))
        link.silenced = .peripheral
        link.run(.pair, on: .central)
        #expect(link.central.deadline == .seconds(30))
        link.now = .seconds(29)
        link.run(.tick, on: .central)
        #expect(link.failure(.central) == nil)
        link.now = .seconds(30)
        link.run(.tick, on: .central)
        let failure = try #require(link.failure(.central))
        #expect(failure.cause == .timeout)
        #expect(link.central.timedOut && link.central.deadline == nil)
        // No Pairing Failed is sent on a timeout, and nothing more goes on this link.
        #expect(link.sent(by: .central) == ["Pairing Request"])
        link.clearRecords()
        link.run(.pair, on: .central)
        #expect(link.failure(.central)?.cause == .refused(.unspecified))
        #expect(link.traffic.isEmpty)
    }

    @Test func theTimerRestartsWithEachPDUWeSend() throws {
        var link = PairingHarness(central: Self.config(.keyboardOnly), peripheral: Self.config(.displayOnly))
        link.typedPasskey[.central] = nil
        // The central waits for its user: the timer runs from the Pairing Request.
        var central = link.central
        _ = central.handle(.pair, now: .seconds(5))
        #expect(central.deadline == .seconds(35))
        let timedOut = central.handle(.tick, now: .seconds(35))
        #expect(timedOut.contains { if case .pairingFailed(let f) = $0 { f.cause == .timeout } else { false } })
    }

    @Test func aLinkThatGoesDownEndsThePairing() throws {
        var link = PairingHarness(central: Self.config(.noInputNoOutput, mitm: false), peripheral: Self.config(.noInputNoOutput, mitm: false))
        link.silenced = .peripheral
        link.run(.pair, on: .central)
        link.run(.disconnected, on: .central)
        #expect(link.failure(.central)?.cause == .linkLost)
        #expect(link.central.deadline == nil)
    }
}
