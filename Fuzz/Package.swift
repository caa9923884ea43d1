// swift-tools-version: 6.0
// libFuzzer targets for every parser that sees outside bytes. A package of its own, depending on
// the main one by path, so the sanitizer flags never reach the normal build:
//
//   swift build --package-path Fuzz -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
//
// or simply ../scripts/fuzz, which builds, seeds each target from Corpus/<target> and runs it.
import PackageDescription

/// SwiftPM names a path dependency after its folder, whatever the checkout is called.
let mainPackage = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "hwprobe").lowercased()

/// One libFuzzer executable per parser: `fuzz-<name>` from `Targets/<name>`.
func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: "fuzz-\(name)", dependencies: ["FuzzSupport"] + dependencies, path: "Targets/\(name)")
}

let transports: Target.Dependency = .product(name: "Transports", package: mainPackage)
let bleProtocol: Target.Dependency = .product(name: "BLEProtocol", package: mainPackage)
let hal: Target.Dependency = .product(name: "HAL", package: mainPackage)
func product(_ name: String) -> Target.Dependency { .product(name: name, package: mainPackage) }

let package = Package(
    name: "hwprobe-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "CFuzzerDriver", path: "Sources/CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver", hal], path: "Sources/FuzzSupport"),
        // Bluetooth: from the controller's byte stream up to GATT.
        fuzzTarget("h4", [transports, bleProtocol]),
        fuzzTarget("hci-event", [transports, bleProtocol]),
        fuzzTarget("advertising", [transports, bleProtocol, hal, product("StandardScale"), product("MiScale"), product("MirrorV1")]),
        fuzzTarget("acl-l2cap", [transports, bleProtocol]),
        fuzzTarget("att", [transports, bleProtocol]),
        fuzzTarget("gatt", [transports, bleProtocol, hal, product("HALFakes")]),
        // The Security Manager: SMP PDUs, and both roles' state machine against a hostile peer
        // and over a damaged link (issue 29).
        fuzzTarget("smp", [bleProtocol, hal]),
        // The host core as a state machine: credits, ACL scheduling, ATT transactions, cancellation.
        fuzzTarget("host", [transports, bleProtocol, hal]),
        // USB: the string descriptors a device sends.
        fuzzTarget("usb", [transports, bleProtocol]),
        // What the scale and mirror drivers read from characteristics and advertisements.
        fuzzTarget("standard-scale", [product("StandardScale")]),
        fuzzTarget("mirror", [product("MirrorV1")]),
        fuzzTarget("mi-scale", [hal, transports, product("MiScale")]),
        // The vendor families' frames and conversations (issue 18).
        fuzzTarget("vendor-scales", [hal, transports, bleProtocol, product("QNScale"), product("IcomonScale"), product("OneByoneScale"),
                                     product("YunmaiScale"), product("BeurerSanitasScale")]),
        // VB1 backups: code texts and containers (no key derivation).
        fuzzTarget("vb1-code", [product("Flows")]),
        fuzzTarget("vb1-container", [product("Flows")]),
        // Cameras: .y4m files, and what a V4L2 device answers.
        fuzzTarget("y4m", [product("Capture")]),
        // What the decoders see: CodeRegions' hint and the zxing-then-zbar arrangement on
        // arbitrary frames.
        fuzzTarget("code-regions", [product("Capture")]),
        fuzzTarget("qr-decode", [product("Capture")]),
        // btsnoop captures read back (tests and tooling).
        fuzzTarget("btsnoop", [transports, bleProtocol]),
        // Cassettes (--record / replay:): the text reader, and the writer it must agree with.
        fuzzTarget("cassette", [transports, bleProtocol]),
        fuzzTarget("v4l2", [product("Capture")]),
        // What a driver says about a dequeued buffer (plane count, bytes used, data offset).
        fuzzTarget("v4l2-dequeue", [product("Capture")]),
    ]
)
