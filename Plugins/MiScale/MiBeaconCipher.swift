import CCrypto
import Transports

/// MiBeacon version 4 and 5 encryption: AES-128-CCM with the device's 16-byte bind key, a 4-byte
/// MIC and one byte of associated data, 0x11, as the xiaomi-ble parser decrypts it
/// (`_decrypt_mibeacon_v4_v5`). The 12-byte nonce is the device's MAC least significant byte
/// first, the product id and frame counter (service data bytes 2–4), and the 3-byte extended
/// counter that sits before the MIC.
public enum MiBeaconCipher {
    static let associatedData: [UInt8] = [0x11]
    static let micLength = 4

    /// The object data of an encrypted version 4/5 frame broadcast by `mac` (most significant
    /// byte first, as printed).
    public static func decrypt(_ frame: MiBeaconFrame, mac: [UInt8], bindKey: [UInt8]) throws(MiBeaconError) -> [UInt8] {
        guard bindKey.count == 16 else { throw .badBindKeyLength(bindKey.count) }
        // withUnsafeBytes rethrows untyped: the typed error goes through a Result.
        let result = bindKey.withUnsafeBytes { key in Result { () throws(MiBeaconError) in try decrypt(frame, mac: mac, key: key) } }
        return try result.get()
    }

    /// The same with a ``BindKey``, whose bytes are read where they are (never copied out).
    public static func decrypt(_ frame: MiBeaconFrame, mac: [UInt8], bindKey: BindKey) throws(MiBeaconError) -> [UInt8] {
        try bindKey.withBytes { key throws(MiBeaconError) in try decrypt(frame, mac: mac, key: key) }
    }

    private static func decrypt(_ frame: MiBeaconFrame, mac: [UInt8], key: UnsafeRawBufferPointer) throws(MiBeaconError) -> [UInt8] {
        guard frame.version >= 4 else { throw .unsupported("version \(frame.version) encryption (only 4 and 5 are read)") }
        let data = frame.bytes
        guard data.count >= frame.objectOffset + 3 + 4 + 1 else { throw .unsupported("too short to hold ciphertext, counter and MIC") }
        let nonce = nonce(frame: frame, mac: frame.macAddress ?? mac)
        let ciphertext = Array(data[frame.objectOffset..<(data.count - 7)])
        let mic = Array(data.suffix(4))
        guard let plaintext = ccm(decrypt: true, key: key, nonce: nonce, input: ciphertext, tag: mic) else { throw .wrongBindKey }
        return plaintext.data
    }

    /// The service data of an encrypted frame: header (`header`, 5 bytes or more) + ciphertext of
    /// `objects` + `extendedCounter` + MIC. For tests and for playing a scale.
    public static func encrypt(header: [UInt8], objects: [UInt8], extendedCounter: [UInt8], mac: [UInt8], bindKey: [UInt8]) -> [UInt8]? {
        guard bindKey.count == 16, extendedCounter.count == 3, mac.count == 6, header.count >= 5,
              let frame = MiBeaconFrame(serviceData: header + objects + extendedCounter + [0, 0, 0, 0]) else { return nil }
        let nonce = nonce(frame: frame, mac: frame.macAddress ?? mac)
        guard let sealed = bindKey.withUnsafeBytes({ ccm(decrypt: false, key: $0, nonce: nonce, input: objects, tag: nil) }) else { return nil }
        return header + sealed.data + extendedCounter + sealed.tag
    }

    private static func nonce(frame: MiBeaconFrame, mac: [UInt8]) -> [UInt8] {
        Array(mac.reversed()) + Array(frame.bytes[2..<5]) + Array(frame.bytes.suffix(7).prefix(3))
    }

    /// AES-128-CCM through libcrypto; nil when the MIC does not verify (or libcrypto fails).
    private static func ccm(decrypt: Bool, key: UnsafeRawBufferPointer, nonce: [UInt8], input: [UInt8], tag: [UInt8]?) -> (data: [UInt8], tag: [UInt8])? {
        guard key.count == 16, let keyBase = key.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let cipher = EVP_aes_128_ccm(), let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var length: Int32 = 0
        var output = [UInt8](repeating: 0, count: max(1, input.count))
        var tagOut = [UInt8](repeating: 0, count: micLength)
        let initialise = decrypt ? EVP_DecryptInit_ex : EVP_EncryptInit_ex
        // EVP_CTRL_AEAD_SET_IVLEN (0x9) and EVP_CTRL_AEAD_SET_TAG (0x11).
        guard initialise(context, cipher, nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, 0x9, Int32(nonce.count), nil) == 1 else { return nil }
        var expected = tag ?? []
        let tagSet = expected.isEmpty
            ? EVP_CIPHER_CTX_ctrl(context, 0x11, Int32(micLength), nil)
            : expected.withUnsafeMutableBytes { EVP_CIPHER_CTX_ctrl(context, 0x11, Int32(micLength), $0.baseAddress) }
        guard tagSet == 1 else { return nil }
        let keyed = nonce.withUnsafeBufferPointer { n in initialise(context, nil, nil, keyBase, n.baseAddress) }
        guard keyed == 1 else { return nil }
        let update = decrypt ? EVP_DecryptUpdate : EVP_EncryptUpdate
        // CCM needs the total length first, then the associated data, then the text in one go.
        guard update(context, nil, &length, nil, Int32(input.count)) == 1,
              associatedData.withUnsafeBufferPointer({ update(context, nil, &length, $0.baseAddress, Int32($0.count)) }) == 1 else { return nil }
        let done = input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { o in update(context, o.baseAddress, &length, i.baseAddress, Int32(i.count)) } }
        // Decrypting, this is where CCM checks the MIC.
        guard done == 1 else { return nil }
        if !decrypt {
            var finalLength: Int32 = 0
            let finished = output.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(context, $0.baseAddress, &finalLength) }
            let got = tagOut.withUnsafeMutableBytes { EVP_CIPHER_CTX_ctrl(context, 0x10, Int32(micLength), $0.baseAddress) }
            guard finished == 1, got == 1 else { return nil }
        }
        return (Array(output.prefix(input.count)), tagOut)
    }
}
