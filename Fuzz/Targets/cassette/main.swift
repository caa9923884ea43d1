import FuzzSupport
import HAL
import Transports

/// A cassette's text as CassetteReader parses it, every section kind of format 1.1 (BLE
/// peripherals, cameras, pads): an error or a whole cassette within the format's limits, and
/// whatever it accepts writes back to text it reads again as the same.
runFuzzer(flags: ["-max_len=65536"]) { bytes in
    guard let read = try? CassetteReader.readAll(bytes) else { return }
    let cassette = read.ble
    precondition(cassette.peripherals.count <= BLECassette.Limits.peripherals, "too many peripherals")
    for peripheral in cassette.peripherals {
        precondition(peripheral.advertising.count <= BLECassette.Limits.advertisingRecords, "too many advertising records")
        for record in peripheral.advertising {
            precondition(record.data.count <= BLECassette.Limits.advertisingBytes, "advertising data past the limit")
        }
        for connection in peripheral.connections {
            for record in connection.att {
                precondition(!record.pdu.isEmpty && record.pdu.count <= BLECassette.Limits.attPDUBytes, "an ATT PDU past the limit")
            }
        }
    }
    precondition(read.cameras.count <= Cassette.maximumMediaDevices && read.pads.count <= Cassette.maximumMediaDevices, "too many cameras or pads")
    for camera in read.cameras {
        precondition(camera.info.formats.count <= CameraCassette.Limits.formats, "too many formats")
        precondition(camera.times.count <= CameraCassette.Limits.frames, "too many frames")
        if let frames = camera.frames {
            precondition(!frames.name.contains("/") && frames.bytes <= CameraCassette.Limits.frameFileBytes, "a frame file outside the limits")
            precondition(frames.bytes >= camera.times.count * (frames.width * frames.height + 6), "frames that cannot fit their file")
        } else {
            precondition(camera.times.isEmpty, "frame times without a frame file")
        }
        precondition(zip(camera.times, camera.times.dropFirst()).allSatisfy { $0.at <= $1.at && $0.sequence < $1.sequence }, "frames out of order")
    }
    for pad in read.pads {
        precondition(pad.cues.count <= PadCassette.Limits.cues, "too many cues")
        precondition(pad.cues.allSatisfy { HapticCue(rawValue: $0.name) != nil && $0.commands.count <= PadCassette.Limits.commandsPerCue },
                     "a cue outside the limits")
    }
    let again = CassetteFormat.text(of: read)
    guard let reread = try? CassetteReader.readAll(Array(again.utf8)) else { preconditionFailure("the writer's text does not read back") }
    // The writer orders peripherals by address, cameras and pads by URI; compare them so.
    let sorted = cassette.peripherals.sorted { $0.address.description + $0.address.kind.rawValue < $1.address.description + $1.address.kind.rawValue }
    let resorted = reread.ble.peripherals.sorted { $0.address.description + $0.address.kind.rawValue < $1.address.description + $1.address.kind.rawValue }
    precondition(sorted == resorted, "a cassette changed on its way through text")
    precondition(read.cameras.sorted { $0.info.uri < $1.info.uri } == reread.cameras, "a camera changed on its way through text")
    precondition(read.pads.sorted { $0.uri < $1.uri } == reread.pads, "a pad changed on its way through text")
}
