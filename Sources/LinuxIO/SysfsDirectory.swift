import Foundation

/// Read-only views of /sys and /dev, rooted anywhere so tests can lay out a fake tree.
public struct SystemTree: Sendable {
    /// Where /sys is (a fake tree in tests).
    public let sysRoot: String
    /// Where /dev is (a fake tree in tests).
    public let devRoot: String

    /// A view rooted at these two paths; the defaults are the machine's own.
    public init(sysRoot: String = "/sys", devRoot: String = "/dev") {
        self.sysRoot = sysRoot
        self.devRoot = devRoot
    }

    /// The machine's real /sys and /dev.
    public static let live = SystemTree()

    /// Entries of a sysfs directory, sorted naturally (video2 before video10); nil if it does not exist.
    public func list(_ relative: String) -> [String]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: sysRoot + "/" + relative) else {
            return nil
        }
        return names.sorted(by: naturalOrder)
    }

    /// Entries of /dev or a folder in it, sorted naturally; empty when it does not exist.
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

    /// Where `relative` really is below the sysfs root, every symbolic link on the way followed
    /// (`class/video4linux/video0` → `devices/pci0000:00/…/1-2/1-2:1.0/video4linux/video0`), so
    /// a device's parents (its USB device, its HID device) can be walked up to. Nil when the
    /// path does not exist, leaves the tree, or links more than 40 times (a loop).
    public func canonical(_ relative: String) -> String? {
        var pending = relative.split(separator: "/").map(String.init)
        var resolved: [String] = []
        var hops = 0
        while !pending.isEmpty {
            let part = pending.removeFirst()
            if part == "." || part.isEmpty { continue }
            if part == ".." {
                guard !resolved.isEmpty else { return nil }
                resolved.removeLast()
                continue
            }
            let path = sysRoot + "/" + (resolved + [part]).joined(separator: "/")
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                hops += 1
                guard hops <= 40, !target.hasPrefix("/") || target.hasPrefix(sysRoot + "/") || target.hasPrefix("/sys/") else { return nil }
                var parts = target.split(separator: "/").map(String.init)
                if target.hasPrefix("/") {
                    let root = target.hasPrefix(sysRoot + "/") ? sysRoot : "/sys"
                    parts = String(target.dropFirst(root.count)).split(separator: "/").map(String.init)
                    resolved = []
                }
                pending = parts + pending
                continue
            }
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            resolved.append(part)
        }
        return resolved.joined(separator: "/")
    }

    /// Whether a sysfs path exists (a capability file, a class link).
    public func exists(_ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: sysRoot + "/" + relative)
    }

    /// The node's path under this view's /dev.
    public func devPath(_ name: String) -> String { devRoot + "/" + name }
}

/// `video2` < `video10`: compare digit runs as numbers.
public func naturalOrder(_ a: String, _ b: String) -> Bool {
    a.compare(b, options: .numeric) == .orderedAscending
}
