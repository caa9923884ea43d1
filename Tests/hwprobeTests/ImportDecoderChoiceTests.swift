import Capture
import Testing
@testable import hwprobe

/// `hwprobe import` decodes camera frames with the zxing+zbar arrangement unless HWPROBE_DECODER says otherwise.
@Suite struct ImportDecoderChoiceTests {
    @Test func theArrangementUnlessToldOtherwise() throws {
        #expect(try ImportCommand.decoder(environment: [:]).name == "zxing+zbar")
        #expect(try ImportCommand.decoder(environment: ["HWPROBE_DECODER": "zbar"]).name == "zbar")
        #expect(try ImportCommand.decoder(environment: ["HWPROBE_DECODER": "zxing"]).name == "zxing")
    }

    @Test func anUnknownDecoderIsAUsageError() {
        #expect(throws: CLIFailure(kind: .usage, message:
            "HWPROBE_DECODER: no QR decoder called 'zebra' (choose one of zxing+zbar, zxing, zbar)")) {
            try ImportCommand.decoder(environment: ["HWPROBE_DECODER": "zebra"])
        }
    }
}
