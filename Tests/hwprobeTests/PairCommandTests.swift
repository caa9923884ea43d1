import BLEProtocol
import HAL
import Testing
@testable import hwprobe

/// `pair`'s options and output (hwprobe-cli.md, third edition): what `--io` and `--passkey`
/// accept, and a JSON line with the contract's fields and never a key's value.
@Suite struct PairCommandTests {
    @Test func ioAndPasskeyAcceptWhatTheContractNamesAndRefuseTheRest() throws {
        #expect(try PairingOptions.ioCapability("display-yes-no", passkey: nil) == .displayYesNo)
        #expect(try PairingOptions.ioCapability(nil, passkey: nil) == .noInputNoOutput)
        #expect(try PairingOptions.ioCapability(nil, passkey: 42) == .keyboardDisplay)
        #expect(throws: CLIFailure.self) { try PairingOptions.ioCapability("keypad", passkey: nil) }
        #expect(try PairingOptions.passkey("000042") == 42)
        #expect(try PairingOptions.passkey("999999") == 999_999)
        for bad in ["1000000", "-1", "12a456", ""] {
            #expect(throws: CLIFailure.self, "\(bad)") { try PairingOptions.passkey(bad) }
        }
        #expect(UnattendedPairing.digits(42) == "000042")
    }

    @Test func theJSONHasTheContractsFieldsAndNoKeyValue() throws {
        let ltk = try #require(SecurityKey(bytes: Array(repeating: 0xAB, count: 16)))
        let peer = try #require(BLEAddress(string: "C0:FF:EE:00:4F:2A/random"))
        let bond = Bond(identity: peer, irk: nil, centralKey: EncryptionKey(ltk: ltk), peripheralKey: EncryptionKey(ltk: ltk),
                        isAuthenticated: true, isSecureConnections: true, keySize: 16)
        let outcome = PairingOutcome(method: .passkeyEntry(.responder), security: bond.security, bond: bond, peerIdentity: nil, keyNames: bond.keyNames)
        let line = PairCommand.json(address: peer, identity: peer, paired: outcome)
        #expect(line == #"{"address":"C0:FF:EE:00:4F:2A","bonded":true,"identity":"C0:FF:EE:00:4F:2A","keys":["ltk"],"method":"passkey","secureConnections":true}"# + "\n")
        #expect(!line.lowercased().contains("abab"))
    }
}
