import HAL

/// `hwprobe list` for people: one block per section, problems at the end.
enum ListTable {
    static func render(_ report: ListReport) -> String {
        var out: [String] = []
        func section(_ title: String, _ rows: [[String]], empty: String) {
            out.append(title)
            if rows.isEmpty {
                out.append("  " + empty)
            } else {
                // A cell is one line: a newline or tab in a device's name is shown, not obeyed
                // (the console escapes the rest of the control characters for every output).
                let rows = rows.map { $0.map { PrintableText.escaping($0) } }
                let widths = rows.reduce(into: [Int]()) { widths, row in
                    for (i, cell) in row.enumerated() {
                        if i >= widths.count { widths.append(0) }
                        widths[i] = max(widths[i], cell.count)
                    }
                }
                for row in rows {
                    let cells = row.enumerated().map { i, cell in
                        i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                    }
                    out.append("  " + cells.joined(separator: "  "))
                }
            }
            out.append("")
        }
        section("Bluetooth controllers", report.controllers.map { [$0.uri, $0.name, $0.address ?? ""] }, empty: "none")
        section("Cameras", report.cameras.flatMap { camera in
            [[camera.uri, camera.card, camera.driver]] + camera.formats.map { ["", "  " + $0.fourcc, $0.sizes.joined(separator: " ")] }
        }, empty: "none")
        section("Haptic devices", report.hapticDevices.map { [$0.uri, $0.name, $0.driver] }, empty: "none")
        section("Serial ports", report.serialPorts.map { [$0.path] }, empty: "none")
        if !report.peripherals.isEmpty || report.problems.contains(where: { $0.section == .peripherals }) {
            section("BLE peripherals", report.peripherals.map { p in
                [p.hci, p.shownAddress, p.addressType, p.name ?? "(no name)", "\(p.rssi) dBm", claim(p),
                 p.weightKg.map { "\(formatKilograms($0)) kg" } ?? p.note.map { "(\($0))" } ?? "", p.services.joined(separator: ",")]
            }, empty: "none seen")
        }
        if !report.problems.isEmpty {
            out.append("Problems")
            for problem in report.problems { out.append("  \(problem.section.rawValue): \(problem.message)") }
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    /// `mirror: mirror-v1 by manufacturer FFFF data 4D 52`: what it is and why the driver matched.
    static func claim(_ peripheral: ListReport.Peripheral) -> String {
        guard let driver = peripheral.driver else {
            return peripheral.hint.map { "scale, no driver: \($0)" } ?? "unclaimed"
        }
        let kind = peripheral.kind.map { "\($0): " } ?? ""
        return kind + (peripheral.reason ?? driver)
    }
}

func formatKilograms(_ kg: Double) -> String {
    let rounded = (kg * 100).rounded() / 100
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if decimals < 2 { text += String(repeating: "0", count: 2 - decimals) }
    }
    return text
}
