import BLEProtocol
import Testing

/// What a GATT client does about a refusal for want of security, code by code and link by link.
struct SecurityRemedyTests {
    static let plain = LinkSecurity.none
    static let justWorks = LinkSecurity(isEncrypted: true, isAuthenticated: false, isSecureConnections: true, keySize: 16)
    static let authenticated = LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 16)
    static let shortKey = LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: false, keySize: 7)

    @Test func insufficientEncryptionEncryptsAnUnencryptedLinkAndNothingMore() {
        #expect(SecurityRemedy.remedy(for: 0x0F, link: Self.plain) == .secure(authenticated: false))
        #expect(SecurityRemedy.remedy(for: 0x0F, link: Self.justWorks) == nil)
    }

    @Test func insufficientAuthenticationAsksForAnAuthenticatedKeyUntilTheLinkHasOne() {
        #expect(SecurityRemedy.remedy(for: 0x05, link: Self.plain) == .secure(authenticated: true))
        #expect(SecurityRemedy.remedy(for: 0x05, link: Self.justWorks) == .secure(authenticated: true))
        #expect(SecurityRemedy.remedy(for: 0x05, link: Self.authenticated) == nil)
    }

    @Test func aKeyTooShortPairsAgainForALongerOne() {
        #expect(SecurityRemedy.remedy(for: 0x0C, link: Self.shortKey) == .pairAgain)
        #expect(SecurityRemedy.remedy(for: 0x0C, link: Self.plain) == .secure(authenticated: false))
        #expect(SecurityRemedy.remedy(for: 0x0C, link: Self.authenticated) == nil)
    }

    @Test func authorizationAndEveryOtherCodeAreNotForPairing() {
        for code in UInt8(0)...0xFF where ![0x05, 0x0C, 0x0F].contains(code) {
            #expect(SecurityRemedy.remedy(for: code, link: Self.plain) == nil, "0x\(String(code, radix: 16))")
        }
        #expect(SecurityRemedy.remediableCodes == [0x05, 0x0C, 0x0F])
    }
}
