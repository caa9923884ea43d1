import Foundation

/// Read-only views of /sys and /dev, rooted anywhere so tests can lay out a fake tree.
public struct SystemTree: Sendable {
    public let sysRoot: String
    public let devRoot: String

    public init(sysRoot: String = "/sys", devRoot: String = "/dev") {
        self.sysRoot = sysRoot
        self.devRoot = devRoot
    }

    public static let live = SystemTree()

    /// Entries of a sysfs directory, sorted naturally (video2 before video10); nil if it does not exist.
    public func list(_ relative: String) -> [String]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: sysRoot + "/" + relative) else {
            return nil
        }
        return names.sorted(by: naturalOrder)
    }

    public func listDev(_ relative: String = "") -> [String] {
        let path = relative.isEmpty ? devRoot : devRoot + "/" + relative
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted(by: naturalOrder)
    }

    /// A sysfs attribute's text without its trailing newline.
    public func attribute(_ relative: String) -> String? {
        guard let data = FileManager.default.contents(atPath: sysRoot + "/" + relative),
              let text = String(data: data, encoding: .utf8) else { return nil }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where a sysfs symlink points, as the last path component (e.g. a `subsystem` link's name).
    public func linkTarget(_ relative: String) -> String? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: sysRoot + "/" + relative) else {
            return nil
        }
        return target.split(separator: "/").last.map(String.init)
    }

    public func exists(_ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: sysRoot + "/" + relative)
    }

    public func devPath(_ name: String) -> String { devRoot + "/" + name }
}

/// `video2` < `video10`: compare digit runs as numbers.
public func naturalOrder(_ a: String, _ b: String) -> Bool {
    a.compare(b, options: .numeric) == .orderedAscending
}
