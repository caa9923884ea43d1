import HAL

/// The words and screens of the scan, kept apart from the state machine so the copy reads in
/// one place and in one voice.
extension BackupImportFlow {
    static let scanIcon = "qrcode.viewfinder"
    static let cameraGoneIcon = "video.slash"
    static let scanTitle = "Scan the QR codes"
    static let scanSubtitle = "From a PDF backup, or the Export screen on another device. Any order works."

    static let notABackupMessage = "That isn't a backup code."
    static let otherBackupMessage = "That code belongs to a different backup."
    static let damagedMessage = "These codes don't fit together. Start over and scan them again."

    /// Before the first code: the camera is the hero, so only a small glyph and two lines of text.
    func introScreen(motion: MotionHint? = nil, footer: Footer? = nil) -> Screen {
        Screen(icon: Self.scanIcon, title: Self.scanTitle, subtitle: Self.scanSubtitle,
               content: .none, motion: motion, footer: footer)
    }

    /// The count and one tile per code of the backup shown. The header stays put so that only
    /// the count and the new tile move.
    func progressScreen(for collector: VB1CodeCollector, motion: MotionHint? = nil, footer: Footer? = nil) -> Screen {
        guard let count = collector.currentCount else {
            return introScreen(motion: motion, footer: footer)
        }
        // The collector numbers codes from 1, the grid's tiles from 0.
        let grid = TileGrid(count: count, scanned: Set(collector.scannedIndexes.map { $0 - 1 }))
        return Screen(icon: Self.scanIcon, title: Self.scanTitle, subtitle: Self.scanSubtitle,
                      content: .tileGrid(grid), motion: motion, footer: footer)
    }

    /// A set that contradicts itself can't be repaired by scanning more, so the only way on is
    /// to throw it away.
    func damagedScreen() -> Screen {
        Screen(icon: Self.scanIcon, title: Self.scanTitle, subtitle: Self.scanSubtitle,
               content: .actions([ScreenAction(id: Self.startOverActionID, title: "Start Over", role: .primary)]),
               footer: Footer(Self.damagedMessage, tone: .error))
    }

    /// The camera went away. Saying that the scanned codes are safe matters more than why the
    /// camera stopped, so the reason goes in the footer.
    func cameraGoneScreen(for collector: VB1CodeCollector, error: (any Error)?) -> Screen {
        let reason = error.map { sentence("\($0)") } ?? "The camera stopped sending pictures."
        let content: ScreenContent
        if let count = collector.currentCount {
            content = .tileGrid(TileGrid(count: count, scanned: Set(collector.scannedIndexes.map { $0 - 1 })))
        } else {
            content = .none
        }
        return Screen(icon: Self.cameraGoneIcon, title: "Camera disconnected",
                      subtitle: "The codes you scanned are kept. Connect a camera to carry on.",
                      content: content, motion: motion.apply(.crossfade), footer: Footer(reason, tone: .warning))
    }
}

/// An error's own words as a sentence: capital first letter, full stop at the end.
private func sentence(_ text: String) -> String {
    guard let first = text.first else { return text }
    let body = first.uppercased() + text.dropFirst()
    return body.hasSuffix(".") ? body : body + "."
}
