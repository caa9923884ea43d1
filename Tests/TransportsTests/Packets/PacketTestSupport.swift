import TestKit

/// Helpers for the packet-layer tests.
enum PacketBytes {
    /// `"04 0E 04 01"` → bytes (TestKit's `bytes(hex:)`).
    static func hex(_ text: String) -> [UInt8] { bytes(hex: text) }

    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
}

