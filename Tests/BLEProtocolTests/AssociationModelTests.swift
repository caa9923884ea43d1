import BLEProtocol
import Testing

/// The association model against the specification's Table 2.8 (Vol 3 Part H §2.3.5.1), written
/// out here cell by cell (rows: responder, columns: initiator, in the table's order DisplayOnly,
/// DisplayYesNo, KeyboardOnly, NoInputNoOutput, KeyboardDisplay), and the rules of Tables 2.6
/// and 2.7 around it.
@Suite struct AssociationModelTests {
    typealias M = PairingMethod
    static let order: [IOCapability] = [.displayOnly, .displayYesNo, .keyboardOnly, .noInputNoOutput, .keyboardDisplay]
    static let jw = M.justWorks, rd = M.passkeyEntry(.responder), id = M.passkeyEntry(.initiator)
    static let bi = M.passkeyEntry(.neither), nc = M.numericComparison

    static let legacy: [[M]] = [
        [jw, jw, rd, jw, rd],
        [jw, jw, rd, jw, rd],
        [id, id, bi, jw, id],
        [jw, jw, jw, jw, jw],
        [id, id, rd, jw, id],
    ]
    static let secureConnections: [[M]] = [
        [jw, jw, rd, jw, rd],
        [jw, nc, rd, jw, nc],
        [id, id, bi, jw, id],
        [jw, jw, jw, jw, jw],
        [id, nc, rd, jw, nc],
    ]

    static func features(_ io: IOCapability, _ auth: AuthenticationRequirements, oob: Bool = false) -> PairingFeatures {
        PairingFeatures(ioCapability: io, oobDataPresent: oob, authentication: auth, initiatorKeys: [], responderKeys: [])
    }

    @Test func everyCellOfTable28() {
        for (row, responder) in Self.order.enumerated() {
            for (column, initiator) in Self.order.enumerated() {
                let request = Self.features(initiator, [.mitm, .secureConnections])
                let response = Self.features(responder, [.mitm, .secureConnections])
                #expect(AssociationModel.method(initiator: request, responder: response, secureConnections: false) == Self.legacy[row][column],
                        "legacy: responder \(responder), initiator \(initiator)")
                #expect(AssociationModel.method(initiator: request, responder: response, secureConnections: true) == Self.secureConnections[row][column],
                        "SC: responder \(responder), initiator \(initiator)")
            }
        }
    }

    @Test func withoutMITMOnEitherSideItIsJustWorks() {
        for responder in Self.order {
            for initiator in Self.order {
                for sc in [false, true] {
                    #expect(AssociationModel.method(initiator: Self.features(initiator, [.bonding]), responder: Self.features(responder, []),
                                                    secureConnections: sc) == .justWorks)
                }
            }
        }
        // Either side asking is enough.
        #expect(AssociationModel.method(initiator: Self.features(.keyboardDisplay, []), responder: Self.features(.displayOnly, [.mitm]),
                                        secureConnections: true) == .passkeyEntry(.responder))
    }

    @Test func oobIsSelectedAsTables26And27Say() {
        let with = Self.features(.noInputNoOutput, [], oob: true)
        let without = Self.features(.noInputNoOutput, [])
        #expect(AssociationModel.needsOOB(initiator: with, responder: without, secureConnections: true))
        #expect(!AssociationModel.needsOOB(initiator: with, responder: without, secureConnections: false))
        #expect(AssociationModel.needsOOB(initiator: with, responder: with, secureConnections: false))
        #expect(!AssociationModel.needsOOB(initiator: without, responder: without, secureConnections: true))
    }

    @Test func onlyPasskeyAndNumericComparisonAreAuthenticated() {
        #expect(!M.justWorks.isAuthenticated)
        #expect(M.numericComparison.isAuthenticated)
        #expect(M.passkeyEntry(.neither).isAuthenticated)
    }
}
