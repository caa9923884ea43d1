import Foundation
import HAL
import Synchronization
import Testing
@_exported import MediaSupport
@_exported import TestKit

/// A scratch directory removed when the test is done.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("capture-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ bytes: [UInt8], to name: String) throws -> String {
        let path = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

extension CameraError {
    /// The message of a `.badFile` error, empty for any other case.
    var badFileMessage: String {
        if case .badFile(let message) = self { return message }
        return ""
    }
}
