import Capture
import Foundation
import HAL
import LinuxIO
import MirrorV1
import Transports

/// The camera and pad halves of `--record FILE` and `replay:FILE` (docs/cli.md, "Cassettes"),
/// shared by every command of one run the way `TransportFactory.recorder` is for Bluetooth:
/// `import` hands its camera through `recording(camera:)`, every haptic sink opened for the run
/// goes through `recording(pad:…)`, and a sink opened on `replay:FILE` is a check that the run
/// ends with (`checkReplays`).
final class MediaCassettes: Sendable {
    /// The cassette being recorded (`--record FILE`), or nil.
    let recordPath: String?
    /// The clock every haptic sink of the run times its cues on (and records and checks them
    /// on): the real one, or a test's, so offsets can be exact.
    let hapticClock: any Clock<Duration>
    private let cameras = Locked<[CameraFrameRecorder]>([])
    private let pads = Locked<[PadRecorder]>([])
    private let replays = Locked<[(uri: String, expected: PadCassette, seen: PadRecorder)]>([])

    init(recordPath: String?, hapticClock: any Clock<Duration> = ContinuousClock()) {
        self.recordPath = recordPath
        self.hapticClock = hapticClock
    }

    /// The companion file of the n-th camera recorded: `FILE.y4m`, then `FILE.2.y4m`…
    static func framesPath(for path: String, index: Int) -> String {
        index == 0 ? path + ".y4m" : path + ".\(index + 1).y4m"
    }

    /// `camera`, recorded into the cassette when one is being made.
    func recording(camera: any CameraSource) throws(CLIFailure) -> any CameraSource {
        guard let recordPath else { return camera }
        let made = cameras.withLock { list -> Result<CameraFrameRecorder, PrivateFileError> in
            let path = Self.framesPath(for: recordPath, index: list.count)
            do throws(PrivateFileError) {
                let recorder = try CameraFrameRecorder(framesPath: path)
                list.append(recorder)
                return .success(recorder)
            } catch {
                return .failure(error)
            }
        }
        switch made {
        case .success(let recorder): return recorder.recording(camera)
        case .failure(let error): throw OutputTarget.failure(error, option: "--record")
        }
    }

    /// The sink a pad plays through, recorded when a cassette is being made: `open` gets the
    /// actuator to schedule on (the device's, with every command written down on its way).
    func recording(pad identity: PadCassette, clock: any Clock<Duration>, actuator: any RumbleActuator,
                   open: (any RumbleActuator) -> any HapticSink) -> any HapticSink {
        guard recordPath != nil else { return open(actuator) }
        let recorder = PadRecorder(identity: identity, clock: clock)
        pads.withLock { $0.append(recorder) }
        return recorder.sink(open(recorder.actuator(actuator, name: actuator.name)))
    }

    /// `replay:FILE` as a pad: a sink that plays nothing and writes down what it was sent, for
    /// `checkReplays` to hold against the cassette's pad.
    func replaying(_ uri: DeviceURI, clock: any Clock<Duration>, open: (any RumbleActuator) -> any HapticSink) throws(CLIFailure) -> any HapticSink {
        guard case .replay(let path) = uri else { throw CLIFailure(kind: .usage, message: "\(uri) is not a cassette") }
        let cassette: Cassette
        do { cassette = try CassetteReader.readAll(path: path) } catch { throw CLIFailure(kind: .device, message: error.described(as: "\(uri)")) }
        guard let expected = cassette.pads.first else {
            throw CLIFailure(kind: .device, message: "\(uri) recorded no haptic device: record one with `hwprobe haptics --device URI --cue NAME --record FILE`")
        }
        let recorder = PadRecorder(identity: expected, clock: clock)
        replays.withLock { $0.append((uri.description, expected, recorder)) }
        return recorder.sink(open(recorder.actuator(nil, name: expected.name)))
    }

    /// How each pad replay of this run differed from its cassette: one block per replay that
    /// did, empty when every cue sent the recorded commands at the recorded offsets.
    func replayDifferences() -> [String] {
        replays.withLock { $0 }.compactMap { replay in
            let lines = replay.expected.differences(seen: replay.seen.cassette.cues)
            guard !lines.isEmpty else { return nil }
            return "\(replay.uri) (\(replay.expected.uri), \(replay.expected.name)) differs from its recording:\n"
                + lines.map { "  " + $0 }.joined(separator: "\n")
        }
    }

    var hasReplays: Bool { !replays.withLock { $0 }.isEmpty }

    /// Publishes the cameras' frame files and returns the cassette's text: the BLE session of
    /// `ble` (when the run had one), the cameras and the pads. Frame files published before a
    /// failure are removed again, so no cassette is left half there.
    func finish(ble: CassetteRecorder?, anonymized: Bool) throws(CLIFailure) -> (text: String, published: [String], warning: String?) {
        var published: [String] = []
        var cameraSections: [CameraCassette] = []
        var dropped = ble?.dropped ?? 0
        for recorder in cameras.withLock({ $0 }) {
            do {
                if let section = try recorder.finish() {
                    cameraSections.append(section)
                    if let frames = section.frames { published.append(PrivateFile.directoryPath(of: recordPath ?? "") + "/" + frames.name) }
                }
            } catch {
                Self.remove(published)
                throw OutputTarget.failure(error, option: "--record")
            }
            dropped += recorder.dropped
        }
        let padSections = pads.withLock { $0 }.map(\.cassette)
        dropped += pads.withLock { $0 }.reduce(0) { $0 + $1.dropped }
        var cassette = Cassette(ble: ble?.cassette ?? BLECassette(), cameras: cameraSections, pads: padSections)
        // Writes that differ on every run by design (the mirror's scan token) are marked, so a
        // replay of the recording does not warn about them each time (issue 27, item 17).
        for index in cassette.ble.peripherals.indices {
            let found = cassette.ble.peripherals[index].valueHandles(of: Self.varyingCharacteristics)
            for handles in found.values { cassette.ble.peripherals[index].varying.formUnion(handles) }
        }
        if anonymized { cassette = CassetteAnonymizer.anonymize(cassette, manufacturerFields: Self.identifyingManufacturerFields) }
        var text = CassetteFormat.text(of: cassette)
        var warning: String?
        if anonymized {
            text += "# anonymized: addresses (also inside values), names, serial numbers, System IDs, bus info and video paths replaced\n"
            // The frames are the point of a camera cassette, and an import's frames are the
            // backup's codes: anonymizing cannot take them out (issue 27, item 5).
            if !cameraSections.isEmpty {
                warning = "--anonymize left the camera's frames as they were: they show what the camera saw "
                    + "(an import's frames are the backup's QR codes, its encrypted vault, which anyone holding the cassette "
                    + "can try passwords against offline); share this cassette only with someone you would give that to"
                text += "# the camera frames are not anonymized: they show what the camera saw\n"
            }
        }
        if dropped > 0 { text += "# \(dropped) records were past the cassette's limits and were not kept\n" }
        return (text, published, warning)
    }

    /// Characteristics whose written value differs on every run: the mirror's scan token (a fresh
    /// random value per scan, docs/mirror-gatt-v1.md).
    static let varyingCharacteristics: Set<BluetoothUUID> = [MirrorGATT.uuid(0x04)]

    /// Manufacturer-data fields that identify one device, from the drivers that know the layouts:
    /// the mirror's serial number (docs/mirror-gatt-v1.md: company 0xFFFF, `4D 52`, version, then
    /// four bytes of serial).
    static let identifyingManufacturerFields: [CassetteAnonymizer.ManufacturerField] = [
        .init(companyID: MirrorV1Driver.companyID, prefix: MirrorV1Driver.marker, range: 3..<7),
    ]

    /// Nothing of this run's recording is kept.
    func abandon() {
        for recorder in cameras.withLock({ $0 }) { recorder.abandon() }
    }

    static func remove(_ paths: [String]) {
        for path in paths { try? FileRemoval.remove(path) }
    }
}

extension InputProbe {
    /// evdev's `uniq` (a wireless pad's Bluetooth address, some pads' serial number) from sysfs,
    /// for a cassette's pad identity; nil when the device has none.
    static func uniq(ofEvdev path: String) -> String? {
        guard let node = path.split(separator: "/").last, node.hasPrefix("event") else { return nil }
        let file = "/sys/class/input/\(node)/device/uniq"
        guard let handle = FileHandle(forReadingAtPath: file) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 256) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
