/// Why a MiBeacon advertisement gave no reading, in words that say what to do.
public enum MiBeaconError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The frame is encrypted and no bind key was given.
    case needsBindKey
    /// A bind key is 16 bytes (32 hex digits).
    case badBindKeyLength(Int)
    /// The MIC did not verify: the key is not this scale's (or the frame was damaged).
    case wrongBindKey
    /// Version 2/3 encryption, mesh frames or frames too short to hold what they announce.
    case unsupported(String)
    /// The decrypted objects do not add up.
    case malformed(String)

    public var description: String {
        switch self {
        case .needsBindKey: "this scale encrypts its advertisements: give its 16-byte bind key (--bind-key, 32 hex digits)"
        case .badBindKeyLength(let count): "a bind key is 16 bytes (32 hex digits), not \(count) bytes"
        case .wrongBindKey: "the bind key does not decrypt this scale's advertisements: check the key for this scale (it changes when the scale is re-paired with the Mi Home app)"
        case .unsupported(let what): "unsupported MiBeacon frame: \(what)"
        case .malformed(let what): "malformed MiBeacon objects: \(what)"
        }
    }
}
