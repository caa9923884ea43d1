import Flows
import FuzzSupport

/// A VB1 container as the joined codes give it: format and scrypt parameter checks, then every
/// field and the key check and decryption with a fixed key. Key derivation (scrypt) is left out.
let key = [UInt8](repeating: 0x5A, count: VB1Container.keyLength)

runFuzzer { bytes in
    if bytes.count >= 3 {
        let parameters = ScryptParameters(logN: bytes[0], r: bytes[1], p: bytes[2])
        _ = (parameters.memoryBytes, parameters.unsupportedReason)
    }
    guard let container = try? VB1Container(parsing: bytes) else { return }
    precondition(container.parameters.unsupportedReason == nil, "a container with unsupported parameters parsed")
    _ = (container.version, container.kdfID, container.salt, container.nonce, container.keyCheck,
         container.header, container.ciphertext, container.tag)
    _ = try? container.open(key: key)
}
