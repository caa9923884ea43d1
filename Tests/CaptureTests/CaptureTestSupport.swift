import Foundation
import HAL
import Synchronization
import Testing
@_exported import MediaSupport

/// The three codes of the VB1 spec's test vector (the third has spaces inside, which are data).
enum VB1Vector {
    static let codes = [
        "VB1:32966C6C:1/3:.+AFTAW503C1V50X507H0QS00+0J61%H1CT1P.1% CC3DVED5QDO$D%5E41S/K6EK0HK2J/CXHA$4P0180CQR0K",
        "VB1:32966C6C:2/3:4OGAS9A4S197TN7XWPE$R32J%H65AKD43ODUBCFZK10WA*NSAN1IHU4QRYGL2DATO7%TLSNP61F7QQU+QHZ74X4",
        "VB1:32966C6C:3/3:F01LUF2Q8:Y8L/RI3BKCICWJ47H58E9GMOQSCQMK GGP3K7SE8G GEQRTD.APADX6Q*8WJOI0O8I$OU OM OA.B",
    ]
}

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
