import TestKit
import Capture
import Flows
import Foundation
import HAL
import MediaSupport

/// Backup imports from generated videos (qrencode-drawn codes in a Y4M file read by our file
/// camera and the decoding pipeline), one random fault per run, each checked against the
/// outcome the import and decrypt flows must reach.
///
/// In-process, so it sees the flows' own states, descriptors and threads; what only the real
/// `hwprobe import` process shows (exit codes, prompts in a terminal, signals, the file on disk,
/// full and read-only disks, special `--out` targets) is soaked by `scripts/soak-import`
/// (`Tests/Terminal/soak_import.py`), which drives the built binary in a pty the way the
/// terminal tests do.
struct ImportSoak {
    struct Fault {
        var label: String
        var expected: String
    }

    static let password = "soak password"
    var random: SplitMix64
    let directory: URL

    mutating func nextFault() -> Fault {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: Fault(label: "none", expected: "decrypted")
        case 1: Fault(label: "wrongPassword", expected: "wrongPassword")
        case 2: Fault(label: "alteredPayload", expected: "damaged")
        case 3: Fault(label: "conflictingDuplicate", expected: "damaged")
        case 4: Fault(label: "missingCode", expected: "sourceEnded")
        case 5: Fault(label: "truncatedFile", expected: "sourceEnded")
        case 6: Fault(label: "strayCodes", expected: "decrypted")
        default: Fault(label: "noiseAndRepeats", expected: "decrypted")
        }
    }

    /// Draws the video a fault calls for; returns its path and the plaintext inside.
    mutating func makeVideo(for fault: Fault, run: Int) throws -> (path: String, plaintext: [UInt8]) {
        let plaintext = Array("{\"run\":\(run),\"secret\":\"\(UInt64.random(in: 0...UInt64.max, using: &random))\"}".utf8)
        let container = try VB1Container.write(plaintext: plaintext, password: Self.password,
                                               parameters: ScryptParameters(logN: 10, r: 8, p: 1))
        let count = Int.random(in: 2...4, using: &random)
        var codes = try VB1Code.split(container: container.bytes, into: count).map(\.text)
        var shown = codes.shuffled(using: &random)
        switch fault.label {
        case "alteredPayload":
            let i = Int.random(in: 0..<count, using: &random)
            codes[i] = try Self.altered(codes[i])
            shown = codes.shuffled(using: &random)
        case "conflictingDuplicate":
            let i = Int.random(in: 0..<count, using: &random)
            shown.insert(try Self.altered(codes[i]), at: 0)
        case "missingCode":
            shown.removeLast()
        case "strayCodes":
            let other = try VB1Container.write(plaintext: Array("other".utf8), password: "x", parameters: ScryptParameters(logN: 10, r: 8, p: 1))
            let stray = try VB1Code.split(container: other.bytes, into: 2).map(\.text)
            shown.insert(stray[0], at: 0)
            shown.insert("https://example.com/not-a-backup", at: 1)
        case "noiseAndRepeats":
            shown += shown.prefix(2)
        default: break
        }
        let path = directory.appendingPathComponent("run\(run).y4m").path
        let writer = try Y4MWriter(path: path, width: 320, height: 240, frameRateNumerator: 10, frameRateDenominator: 1)
        var sequence: UInt64 = 0
        for text in shown {
            try writer.write(QRFixture.blank(sequence: sequence))
            sequence += 1
            try writer.write(QRFixture.frame(text, sequence: sequence))
            sequence += 1
        }
        writer.close()
        if fault.label == "truncatedFile" {
            // Cut the file inside the frame that shows the last code.
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            let size = try handle.seekToEnd()
            try handle.truncate(atOffset: size - UInt64(320 * 240 / 2))
            try handle.close()
        }
        return (path, plaintext)
    }

    /// The same code with one data byte changed (still valid Base45, same index and ID).
    static func altered(_ text: String) throws -> String {
        let code = try VB1Code(parsing: text)
        var data = code.data
        data[data.count / 2] ^= 0x5A
        return try VB1Code(id: code.id, index: code.index, count: code.count, data: data).text
    }

    struct Run {
        var fault: Fault
        var outcome: String
        var leftovers: [String]
    }

    mutating func run(_ fault: Fault, number: Int, baseline: ProcessResources) async throws -> Run {
        let (path, plaintext) = try makeVideo(for: fault, run: number)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ContinuousClock()
        var importBox: WeakBox?
        var decryptBox: WeakBox?
        var outcome = "?"
        do {
            let camera = try FileCameraSource(path: path, paced: false)
            // The arrangement hwprobe uses: zxing, and zbar when zxing reads nothing but a code seems there.
            let decoder = try CodeDecoders.decoder(named: CodeDecoders.defaultName)
            let importer = BackupImportFlow(codes: DecodingPipeline(camera: camera, decoder: decoder), clock: clock, unattended: true)
            importBox = WeakBox(importer)
            let drain = Task { for await _ in importer.outputs {} }
            let scanned = await importer.run()
            if case .sourceEnded = scanned { importer.cancel() }
            await drain.value
            switch scanned {
            case .completed(let container, _, _):
                let password = fault.label == "wrongPassword" ? "not the password" : Self.password
                let (result, derivations) = await Self.decrypt(container, password: password, clock: clock, box: &decryptBox)
                if derivations != 0 { outcome = "derivation left running" } else {
                    switch result {
                    case .decrypted(let bytes): outcome = bytes == SecretBytes(copying: plaintext) ? "decrypted" : "decrypted wrong bytes"; bytes.wipe()
                    case .damaged: outcome = "decryptDamaged"
                    case .unsupported: outcome = "unsupported"
                    case .cancelled: outcome = "wrongPassword"
                    }
                }
            case .damaged: outcome = "damaged"
            case .sourceEnded: outcome = "sourceEnded"
            case .timedOut: outcome = "timedOut"
            case .cancelled: outcome = "cancelled"
            }
        } catch {
            outcome = "error: \(error)"
        }
        let leftovers = await leftovers(since: baseline, objects: [("import flow", importBox), ("decrypt flow", decryptBox)])
        return Run(fault: fault, outcome: outcome, leftovers: leftovers)
    }

    /// Types `password` once, as hwprobe's unattended import does; a refusal ends the attempt.
    static func decrypt(_ container: [UInt8], password: String, clock: ContinuousClock, box: inout WeakBox?) async -> (DecryptOutcome, Int) {
        let flow = BackupDecryptFlow(container: container, clock: clock)
        box = WeakBox(flow)
        let typing = Task {
            for await output in flow.outputs {
                switch output {
                case .event(.passwordWanted(attempt: 1)): flow.submit(password: password)
                case .event(.passwordRefused): flow.dismiss()
                default: break
                }
            }
        }
        let outcome = await flow.run()
        await typing.value
        return (outcome, flow.runningDerivations)
    }
}
