import Capture
import Flows
import Foundation
import HAL
import MediaSupport

/// Writes what the bench VM's V4L2 group feeds through vivid: a fresh VB1 backup split into codes,
/// each drawn as one QR frame (Debian's qrencode) in a mono YUV4MPEG2 file, plus its password and
/// the plaintext the import must give back.
///
///     bench-vm-fixtures DIRECTORY WIDTH HEIGHT
///
/// DIRECTORY/codes.y4m: frame 0 blank, then one frame per code (codes in order 2, 3, …, 1, so the
/// import also has to cope with an order it did not expect); DIRECTORY/password; DIRECTORY/plaintext.
///
///     bench-vm-fixtures haptics DIRECTORY
///
/// writes what the evdev and usb groups expect a pad to receive for each cue (HapticExpectations).
let arguments = CommandLine.arguments
if arguments.count == 3 && arguments[1] == "haptics" {
    do {
        try HapticExpectations.write(to: URL(fileURLWithPath: arguments[2]))
        print("haptic expectations for \(HapticCue.allCases.count) cues in \(arguments[2])")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("bench-vm-fixtures: \(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count == 4, let width = Int(arguments[2]), let height = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: bench-vm-fixtures DIRECTORY WIDTH HEIGHT | bench-vm-fixtures haptics DIRECTORY\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[1])
let password = "bench vm password"
let plaintext = Array(#"{"items":[{"issuer":"BenchVM","account":"vivid@example.org","secret":"JBSWY3DPEHPK3PXP"}]}"#.utf8)

do {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let container = try VB1Container.write(plaintext: plaintext, password: password,
                                           parameters: ScryptParameters(logN: 12, r: 8, p: 1))
    let codes = try VB1Code.split(container: container.bytes, into: 4).map(\.text)
    let shown = Array(codes.dropFirst()) + [codes[0]]
    let writer = try Y4MWriter(path: directory.appendingPathComponent("codes.y4m").path, width: width, height: height,
                               frameRateNumerator: 10, frameRateDenominator: 1, colorSpace: .mono)
    try writer.write(QRFixture.blank(width: width, height: height, sequence: 0))
    for (index, text) in shown.enumerated() {
        try writer.write(QRFixture.frame(text, width: width, height: height, scale: 4, sequence: UInt64(index + 1)))
    }
    writer.close()
    try Data(password.utf8).write(to: directory.appendingPathComponent("password"))
    try Data(plaintext).write(to: directory.appendingPathComponent("plaintext"))
    print("\(codes.count) codes, \(width)x\(height), in \(directory.path)")
} catch {
    FileHandle.standardError.write(Data("bench-vm-fixtures: \(error)\n".utf8))
    exit(1)
}
