import TestKit
import Flows
import Testing

@Suite("VB1 container")
struct VB1ContainerTests {
    private func writeVector(deriver: any KeyDeriver = ScryptKeyDeriver()) throws -> VB1Container {
        try VB1Container.write(
            plaintext: VB1Vector.plaintext, password: VB1Vector.password, parameters: VB1Vector.parameters,
            salt: VB1Vector.salt, nonce: VB1Vector.nonce, deriver: deriver)
    }

    private func flipped(_ bytes: [UInt8], at offset: Int) -> [UInt8] {
        var copy = bytes
        copy[offset] ^= 0x01
        return copy
    }

    @Test func writingTheSpecVectorReproducesItExactly() throws {
        #expect(VB1Vector.plaintext.count == 113)
        #expect(VB1Vector.container.count == 174)
        let container = try writeVector()
        #expect(hexString(container.bytes) == VB1Vector.containerHex)
    }

    @Test func readingTheSpecVector() throws {
        let container = try VB1Container(parsing: VB1Vector.container)
        #expect(container.version == 1)
        #expect(container.kdfID == 1)
        #expect(container.parameters == VB1Vector.parameters)
        #expect(container.salt == VB1Vector.salt)
        #expect(container.nonce == VB1Vector.nonce)
        #expect(container.header == Array(VB1Vector.container.prefix(45)))
        #expect(container.ciphertext.count == 113)
        #expect(container.tag == Array(VB1Vector.container.suffix(16)))
        #expect(try container.open(password: VB1Vector.password) == VB1Vector.plaintext)
    }

    @Test func derivingAndOpeningAsSeparateSteps() throws {
        let container = try VB1Container(parsing: VB1Vector.container)
        let key = try container.deriveKey(password: VB1Vector.password)
        #expect(key.count == 32)
        #expect(try container.open(key: key) == VB1Vector.plaintext)
        var wrongKey = key
        wrongKey[0] ^= 1
        #expect(throws: VB1ContainerError.incorrectPassword) { try container.open(key: wrongKey) }
        #expect(throws: VB1ContainerError.self) { try container.open(key: Array(key.prefix(16))) }
    }

    @Test func wrongPasswordIsIncorrectPassword() {
        #expect(throws: VB1ContainerError.incorrectPassword) {
            try VB1Container.open(VB1Vector.container, password: "correct horse battery stapler")
        }
        #expect(throws: VB1ContainerError.incorrectPassword) {
            try VB1Container.open(VB1Vector.container, password: "")
        }
    }

    @Test("a changed ciphertext or tag byte is damage, not a wrong password", arguments: [45, 100, 157, 158, 173])
    func flippedBodyByteIsDamaged(offset: Int) {
        let bytes = flipped(VB1Vector.container, at: offset)
        #expect {
            try VB1Container.open(bytes, password: VB1Vector.password)
        } throws: { error in
            guard case VB1ContainerError.damaged = error else { return false }
            return true
        }
    }

    @Test("a changed nonce byte keeps the key check but breaks the AAD and IV", arguments: [25, 30, 36])
    func flippedNonceByteIsDamaged(offset: Int) {
        let bytes = flipped(VB1Vector.container, at: offset)
        #expect {
            try VB1Container.open(bytes, password: VB1Vector.password)
        } throws: { error in
            guard case VB1ContainerError.damaged = error else { return false }
            return true
        }
    }

    @Test("a changed magic, version or KDF byte is not a backup", arguments: [0, 3, 4, 5])
    func flippedIdentityByteIsNotABackup(offset: Int) {
        let deriver = CountingDeriver()
        #expect(throws: VB1ContainerError.notABackup) {
            try VB1Container.open(self.flipped(VB1Vector.container, at: offset), password: VB1Vector.password,
                                  deriver: deriver)
        }
        #expect(deriver.callCount == 0)
    }

    @Test("a changed salt, parameter or key check byte changes the key check", arguments: [6, 7, 8, 9, 24, 37, 44])
    func flippedKeyInputIsIncorrectPassword(offset: Int) {
        // logN 10→11, r 8→9, p 1→0 (unsupported), salt bytes, key check bytes.
        let bytes = flipped(VB1Vector.container, at: offset)
        if offset == 8 {
            #expect(throws: VB1ContainerError.unsupportedParameters("p 0 is outside 1...16")) {
                try VB1Container.open(bytes, password: VB1Vector.password)
            }
        } else {
            #expect(throws: VB1ContainerError.incorrectPassword) {
                try VB1Container.open(bytes, password: VB1Vector.password)
            }
        }
    }

    @Test func tooShortIsNotABackup() {
        #expect(throws: VB1ContainerError.notABackup) { try VB1Container(parsing: []) }
        #expect(throws: VB1ContainerError.notABackup) { try VB1Container(parsing: Array("VLTB".utf8)) }
        #expect(throws: VB1ContainerError.notABackup) { try VB1Container(parsing: Array(VB1Vector.container.prefix(60))) }
        #expect(throws: VB1ContainerError.notABackup) {
            try VB1Container(parsing: Array("{\"items\":[]}".utf8) + [UInt8](repeating: 0, count: 80))
        }
    }

    @Test("parameter bounds are refused before any derivation", arguments: [
        ScryptParameters(logN: 9, r: 8, p: 1),
        ScryptParameters(logN: 23, r: 8, p: 1),
        ScryptParameters(logN: 255, r: 255, p: 255),
        ScryptParameters(logN: 10, r: 0, p: 1),
        ScryptParameters(logN: 10, r: 33, p: 1),
        ScryptParameters(logN: 10, r: 8, p: 0),
        ScryptParameters(logN: 10, r: 8, p: 17),
        ScryptParameters(logN: 22, r: 32, p: 1),
        ScryptParameters(logN: 22, r: 3, p: 1),
        ScryptParameters(logN: 20, r: 9, p: 16),
        ScryptParameters(logN: 16, r: 1, p: 1),    // scrypt itself needs N < 2^(16·r)
    ])
    func unsupportedParametersNeverDerive(parameters: ScryptParameters) {
        let deriver = CountingDeriver()
        let bytes = craftedContainer(logN: parameters.logN, r: parameters.r, p: parameters.p)
        #expect(parameters.unsupportedReason != nil)
        #expect {
            try VB1Container.open(bytes, password: "x", deriver: deriver)
        } throws: { error in
            guard case VB1ContainerError.unsupportedParameters = error else { return false }
            return true
        }
        #expect {
            try VB1Container.write(plaintext: [1], password: "x", parameters: parameters, deriver: deriver)
        } throws: { error in
            guard case VB1ContainerError.unsupportedParameters = error else { return false }
            return true
        }
        #expect(deriver.callCount == 0)
    }

    @Test("parameters at the edges are accepted by the parser", arguments: [
        ScryptParameters(logN: 10, r: 1, p: 1),
        ScryptParameters(logN: 15, r: 1, p: 1),
        ScryptParameters(logN: 22, r: 2, p: 16),   // exactly 1 GiB
        ScryptParameters(logN: 17, r: 32, p: 16),  // 512 MiB
        ScryptParameters(logN: 20, r: 8, p: 1),    // exactly 1 GiB
        ScryptParameters.exportDefault,
    ])
    func supportedParametersParse(parameters: ScryptParameters) throws {
        let container = try VB1Container(parsing: craftedContainer(logN: parameters.logN, r: parameters.r, p: parameters.p))
        #expect(container.parameters == parameters)
        #expect(parameters.memoryBytes <= ScryptParameters.memoryLimit)
    }

    @Test func theFormatCheckComesBeforeTheParameterCheck() {
        let bytes = craftedContainer(logN: 40, r: 200, p: 1, magic: Array("VLTC".utf8))
        #expect(throws: VB1ContainerError.notABackup) { try VB1Container(parsing: bytes) }
    }

    @Test func defaultExportParameters() {
        #expect(ScryptParameters.exportDefault == ScryptParameters(logN: 17, r: 8, p: 1))
        #expect(ScryptParameters.exportDefault.memoryBytes == 128 << 20)
    }

    @Test func nfcAndNfdPasswordsOpenTheSameBackup() throws {
        let composed = "Caf\u{E9} cr\u{E8}me \u{212B}"      // é, è precomposed; Ångström sign (NFC → Å)
        let decomposed = "Cafe\u{301} cre\u{300}me A\u{30A}"
        #expect(Array(composed.utf8) != Array(decomposed.utf8))
        #expect(VB1Container.passwordBytes(composed) == VB1Container.passwordBytes(decomposed))
        #expect(VB1Container.passwordBytes(decomposed) == Array("Caf\u{E9} cr\u{E8}me \u{C5}".utf8))

        let container = try VB1Container.write(plaintext: VB1Vector.plaintext, password: composed,
                                               parameters: VB1Vector.parameters)
        #expect(try container.open(password: decomposed) == VB1Vector.plaintext)
        let other = try VB1Container.write(plaintext: VB1Vector.plaintext, password: decomposed,
                                           parameters: VB1Vector.parameters)
        #expect(try other.open(password: composed) == VB1Vector.plaintext)
    }

    @Test func freshSaltAndNonceEachTime() throws {
        let first = try VB1Container.write(plaintext: [1, 2, 3], password: "pw", parameters: VB1Vector.parameters)
        let second = try VB1Container.write(plaintext: [1, 2, 3], password: "pw", parameters: VB1Vector.parameters)
        #expect(first.salt != second.salt)
        #expect(first.nonce != second.nonce)
        #expect(try first.open(password: "pw") == [1, 2, 3])
        #expect(try second.open(password: "pw") == [1, 2, 3])
    }

    @Test func emptyPlaintextIsTheShortestContainer() throws {
        let container = try VB1Container.write(plaintext: [], password: "", parameters: VB1Vector.parameters)
        #expect(container.bytes.count == VB1Container.minimumLength)
        #expect(try VB1Container.open(container.bytes, password: "") == [])
    }

    @Test func wrongSizedSaltOrNonceIsRefused() {
        #expect(throws: VB1ContainerError.self) {
            try VB1Container.write(plaintext: [1], password: "x", parameters: VB1Vector.parameters, salt: [1, 2, 3])
        }
        #expect(throws: VB1ContainerError.self) {
            try VB1Container.write(plaintext: [1], password: "x", parameters: VB1Vector.parameters, nonce: [])
        }
    }

    @Test func aFailingDeriverIsACryptoFailure() {
        struct Broken: KeyDeriver {
            struct Failure: Error {}
            func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] {
                throw Failure()
            }
        }
        struct Short: KeyDeriver {
            func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] {
                [1, 2, 3]
            }
        }
        for deriver in [Broken() as any KeyDeriver, Short()] {
            #expect {
                try VB1Container.open(VB1Vector.container, password: VB1Vector.password, deriver: deriver)
            } throws: { error in
                guard case VB1ContainerError.cryptoFailure = error else { return false }
                return true
            }
        }
    }

    @Test func theDeriverSeesNFCBytesSaltAndParameters() throws {
        struct Recording: KeyDeriver {
            func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] {
                #expect(password == Array("\u{E9}".utf8))
                #expect(salt == VB1Vector.salt)
                #expect(parameters == VB1Vector.parameters)
                return try ScryptKeyDeriver().deriveKey(password: password, salt: salt, parameters: parameters)
            }
        }
        let container = try VB1Container.write(plaintext: [9], password: "e\u{301}", parameters: VB1Vector.parameters,
                                               salt: VB1Vector.salt, deriver: Recording())
        #expect(try container.open(password: "\u{E9}", deriver: Recording()) == [9])
    }
}
