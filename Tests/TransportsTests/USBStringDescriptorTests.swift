import Testing
import Transports

@Suite struct USBStringDescriptorTests {
    /// The Xbox 360 pad's manufacturer string as the device sends it ("©" is outside ASCII).
    static let maker: [UInt8] = [0x2E, 0x03] + Array("©Microsoft Corporation".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })

    @Test func readsUTF16TextAndLanguages() throws {
        #expect(try USBStringDescriptor.text(Self.maker) == "©Microsoft Corporation")
        #expect(try USBStringDescriptor.languages([0x06, 0x03, 0x09, 0x04, 0x07, 0x04]) == [0x0409, 0x0407])
        #expect(try USBStringDescriptor.text([0x08, 0x03, 0x50, 0x00, 0x61, 0x00, 0x00, 0x00]) == "Pa")
        #expect(try USBStringDescriptor.text([0x02, 0x03]) == "")
    }

    @Test func lengthsComeFromWhatArrived() throws {
        // bLength beyond the bytes received, a wrong type, no header: refused.
        #expect(throws: USBDescriptorError.self) { try USBStringDescriptor.text([0x10, 0x03, 0x41, 0x00]) }
        #expect(throws: USBDescriptorError.self) { try USBStringDescriptor.text([0x04, 0x02, 0x41, 0x00]) }
        #expect(throws: USBDescriptorError.self) { try USBStringDescriptor.text([0x04]) }
        #expect(throws: USBDescriptorError.self) { try USBStringDescriptor.languages([0x01, 0x03]) }
        // Bytes after bLength are not part of the string; half a code unit is ignored; a lone
        // surrogate is repaired.
        #expect(try USBStringDescriptor.text([0x04, 0x03, 0x41, 0x00, 0x42, 0x00]) == "A")
        #expect(try USBStringDescriptor.text([0x05, 0x03, 0x41, 0x00, 0x42]) == "A")
        #expect(try USBStringDescriptor.text([0x04, 0x03, 0x00, 0xD8]) == "\u{FFFD}")
    }
}
