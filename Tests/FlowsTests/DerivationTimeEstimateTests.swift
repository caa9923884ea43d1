import Testing
@testable import Flows

@Suite struct DerivationTimeEstimateTests {
    @Test func wordingFollowsTheExpectedTime() {
        #expect(DerivationTimeEstimate.decryptingLine(expectedSeconds: 0.4) == "Decrypting. This takes a moment.")
        #expect(DerivationTimeEstimate.decryptingLine(expectedSeconds: 4) == "Decrypting. This can take up to 10 seconds.")
        #expect(DerivationTimeEstimate.decryptingLine(expectedSeconds: 30) == "Decrypting. This can take up to 45 seconds.")
        #expect(DerivationTimeEstimate.decryptingLine(expectedSeconds: 39) == "Decrypting. This can take up to 55 seconds.")
        #expect(DerivationTimeEstimate.decryptingLine(expectedSeconds: 40) == "Decrypting. This can take up to 1 minute.")
        #expect(DerivationTimeEstimate.decryptingLine(expectedSeconds: 100) == "Decrypting. This can take up to 3 minutes.")
    }

    @Test func estimateScalesWithNRP() {
        let estimate = DerivationTimeEstimate(secondsPerUnit: 1e-7)
        let base = estimate.seconds(for: ScryptParameters(logN: 17, r: 8, p: 1))
        #expect(abs(estimate.seconds(for: ScryptParameters(logN: 18, r: 8, p: 1)) - 2 * base) < 1e-9)
        #expect(abs(estimate.seconds(for: ScryptParameters(logN: 17, r: 8, p: 4)) - 4 * base) < 1e-9)
        #expect(abs(estimate.seconds(for: ScryptParameters(logN: 17, r: 16, p: 1)) - 2 * base) < 1e-9)
    }

    /// The real measurement uses the real deriver; here it must produce a usable, positive figure
    /// (the value itself depends on the machine, so only its sanity is checked).
    @Test func measuringThisMachineGivesAPositiveRate() throws {
        let estimate = try #require(DerivationTimeEstimate.measure())
        #expect(estimate.secondsPerUnit > 0)
        #expect(DerivationTimeEstimate.cached() != nil)
    }

    @Test func aFailingDeriverGivesNoEstimate() {
        struct Broken: KeyDeriver {
            struct Failure: Error {}
            func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] { throw Failure() }
        }
        #expect(DerivationTimeEstimate.measure(with: Broken()) == nil)
    }
}
