import FuzzSupport
import Transports

/// A string descriptor as a USB device sends it, read as the language table (descriptor 0) and
/// as the product string `hwprobe list` shows.
runFuzzer { bytes in
    if let languages = try? USBStringDescriptor.languages(bytes) {
        precondition(languages.count <= bytes.count / 2, "more language IDs than bytes for them")
    }
    _ = try? USBStringDescriptor.text(bytes)
}
