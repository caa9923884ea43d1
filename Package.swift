// swift-tools-version: 6.0
// The package layout is part of the design: see docs/architecture.md.
import PackageDescription

/// System libraries come from Debian through pkg-config; the apt hint tells a newcomer what to install.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// Device drivers live one per folder under Plugins/ and may import HAL and Transports only
/// (and a system library a device's own protocol needs: `extra`).
func driver(_ name: String, folder: String, extra: [Target.Dependency] = []) -> Target {
    .target(name: name, dependencies: ["HAL", "Transports"] + extra, path: "Plugins/\(folder)")
}

let driverTargets: [Target] = [
    driver("StandardScale", folder: "StandardScale"),
    // CCrypto: the S400's MiBeacon advertisements are AES-CCM encrypted with its bind key.
    driver("MiScale", folder: "MiScale", extra: ["CCrypto"]),
    driver("QNScale", folder: "QNScale"),
    driver("IcomonScale", folder: "IcomonScale"),
    driver("OneByoneScale", folder: "OneByoneScale"),
    driver("YunmaiScale", folder: "YunmaiScale"),
    driver("BeurerSanitasScale", folder: "BeurerSanitasScale"),
    driver("MirrorV1", folder: "MirrorV1"),
    driver("Xbox360Pad", folder: "Xbox360Pad"),
    driver("DualShock4", folder: "DualShock4"),
    driver("EvdevRumble", folder: "EvdevRumble"),
]

let package = Package(
    name: "hwprobe",
    products: [
        .executable(name: "hwprobe", targets: ["hwprobe"]),
        .library(name: "HAL", targets: ["HAL"]),
        // HAL's fakes and manual clock, for the tests, the simulated bench and the fuzz targets.
        .library(name: "HALFakes", targets: ["HALFakes"]),
        // For the fuzz targets only: Fuzz/ is a package of its own that depends on this one by
        // path (so the sanitizers never touch the normal build), and a package sees only
        // another package's products.
        .library(name: "Transports", targets: ["Transports"]),
        .library(name: "BLEProtocol", targets: ["BLEProtocol"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Flows", targets: ["Flows"]),
        // The in-process LE controller and its GATT peripherals: `--hci sim:`, the host tests, and
        // (later) the fuzz targets that play a controller at the host.
        .library(name: "VirtualController", targets: ["VirtualController"]),
        // The sans-IO GATT peripherals and the peripheral host (`hwprobe serve`).
        .library(name: "Peripherals", targets: ["Peripherals"]),
    ] + driverTargets.map { .library(name: $0.name, targets: [$0.name]) },
    targets: [
        systemLibrary("CBlueZ", pkgConfig: "bluez", apt: "libbluetooth-dev"),
        systemLibrary("CLibUSB", pkgConfig: "libusb-1.0", apt: "libusb-1.0-0-dev"),
        systemLibrary("CV4L2", pkgConfig: "libv4l2", apt: "libv4l-dev"),
        systemLibrary("CZBar", pkgConfig: "zbar", apt: "libzbar-dev"),
        systemLibrary("CCrypto", pkgConfig: "libcrypto", apt: "libssl-dev"),
        systemLibrary("CZXing", pkgConfig: "zxing", apt: "libzxing-dev"),
        // zxing-cpp is C++: this bridge gives Swift a C function over its QR reader (no C++ interop,
        // no exception crossing into Swift).
        .target(name: "CZXingBridge", dependencies: ["CZXing"], path: "Sources/CZXingBridge"),
        // The per-pixel loops run on every camera frame (the change gate's tile signature), in C so a
        // debug build keeps up with a camera too.
        .target(name: "CPixelKernels", path: "Sources/CPixelKernels", linkerSettings: [.linkedLibrary("m")]),
        // Thin C wrappers for what Swift cannot import: variadic ioctl/open and function-like ioctl macros.
        .target(name: "CLinuxShims", dependencies: ["CBlueZ"], path: "Sources/CLinuxShims"),

        // Typed Swift wrappers over every system call the project makes (descriptors, errno, poll,
        // ioctl, mmap, sockets, termios, netlink, sysfs, V4L2 through libv4l2): the one place that
        // calls libc I/O (scripts/check-libc-io), so device code reads as intent rather than as C.
        .target(name: "LinuxIO", dependencies: ["CLinuxShims", "CV4L2"], path: "Sources/LinuxIO"),
        .target(name: "HAL", path: "Sources/HAL"),
        // Fakes, the simulated mirror and the manual clock, for tests and the simulated bench: not in
        // HAL, so the abstraction ships without its doubles.
        .target(name: "HALFakes", dependencies: ["HAL"], path: "Sources/HALFakes"),
        // The BLE host's pure half: the H4, HCI, ACL, L2CAP, ATT and advertising codecs and the
        // sans-IO state (credits, ACL scheduling, ATT transactions), values fed bytes with no I/O,
        // so the virtual controller and the fuzz targets use them without any descriptor code.
        // CCrypto for the Security Manager's AES-128, AES-CMAC and P-256 (Security/).
        .target(name: "BLEProtocol", dependencies: ["HAL", "CCrypto"], path: "Sources/BLEProtocol"),
        .target(name: "Transports", dependencies: ["HAL", "BLEProtocol", "LinuxIO", "CLibUSB"],
                path: "Sources/Transports"),
        .target(name: "Capture", dependencies: ["HAL", "LinuxIO", "CV4L2", "CZBar", "CZXingBridge", "CPixelKernels"],
                path: "Sources/Capture"),
        .target(name: "Flows", dependencies: ["HAL", "CCrypto"], path: "Sources/Flows"),
        // Speaks HCI to our host as a controller does, with the simulated bench's mirror and scale
        // as GATT peripherals; BLEProtocol's codecs on the wire, Transports for the byte-stream
        // interface it offers the host and the host a cassette replays into.
        .target(name: "VirtualController", dependencies: ["HAL", "HALFakes", "BLEProtocol", "Transports", "Peripherals"], path: "Sources/VirtualController"),
        // GATT peripherals as sans-IO values (the ATT server and attribute database, the bench's
        // mirror and scale, a cassette's peripheral) and the host that runs any of them on a real
        // controller in the peripheral role: a peripheral is protocol, not a controller, so the
        // virtual controller and `hwprobe serve` run the same code.
        .target(name: "Peripherals", dependencies: ["HAL", "HALFakes", "BLEProtocol", "Transports"], path: "Sources/Peripherals"),
        .executableTarget(
            name: "hwprobe",
            dependencies: ["HAL", "HALFakes", "LinuxIO", "BLEProtocol", "Transports", "Capture", "Flows", "VirtualController", "Peripherals"] + driverTargets.map { .target(name: $0.name) },
            path: "Sources/hwprobe",
            plugins: [.plugin(name: "GitCommit")]),
        // Writes the git commit hwprobe was built from into the build directory (hwprobe --version);
        // BuildTools/, since Plugins/ holds the device drivers.
        .plugin(name: "GitCommit", capability: .buildTool(), path: "BuildTools/GitCommitPlugin"),

        // Runs the flows many times with random faults and checks how each run ends (issue 9).
        .executableTarget(name: "soak", dependencies: ["HAL", "Transports", "Capture", "Flows", "MirrorV1", "PeerSupport", "MediaSupport", "TestKit"],
                          path: "Tests/Soak"),
        .executableTarget(name: "ble-bench", dependencies: ["HAL", "Transports", "PeerSupport"], path: "Benchmarks/BLEBench"),
        // Our host over the virtual controller, where no peer is the bottleneck (notifications/s, CPU each).
        .executableTarget(name: "vc-bench", dependencies: ["HAL", "BLEProtocol", "Transports", "VirtualController", "Peripherals"], path: "Benchmarks/VirtualControllerBench"),
        // Test helper, not shipped: opens a pad URI with the real drivers and plays cues on a fast
        // clock, for the umockdev tests in PluginsTests (which run it under umockdev-run).
        .executableTarget(name: "pad-probe", dependencies: ["HAL", "Xbox360Pad", "DualShock4"], path: "Tests/PadProbe"),
        // Writes the VB1 backup video that Tests/BenchVM feeds through vivid (test-only).
        .executableTarget(name: "bench-vm-fixtures", dependencies: ["HAL", "Capture", "Flows", "MediaSupport"],
                          path: "Tests/BenchVM/Fixtures"),
        // The reference the decode benchmark compares against: zbar_scan_image called from a plain C loop.
        .target(name: "CZBarReference", dependencies: ["CZBar"], path: "Benchmarks/ZBarReference"),
        .executableTarget(name: "decode-bench", dependencies: ["HAL", "Capture", "Flows", "MediaSupport", "CZBarReference"],
                          path: "Benchmarks/DecodeBench"),
        .testTarget(name: "HALTests", dependencies: ["HAL", "HALFakes", "TestKit"], path: "Tests/HALTests"),
        // LinuxIO's own tests, against real descriptors, ptys, signals and temporary trees (not through Transports).
        .testTarget(name: "LinuxIOTests", dependencies: ["LinuxIO", "TestKit"], path: "Tests/LinuxIOTests"),
        // Starts and talks to the bumble peers (Tests/Peers) for the real-path tests of several targets.
        .target(name: "PeerSupport", dependencies: ["HAL", "Transports"], path: "Tests/PeerSupport"),
        // QR pictures made by Debian's qrencode CLI, and the blur, noise and perspective that spoil
        // them, for the capture and import tests and the decode benchmark.
        .target(name: "MediaSupport", dependencies: ["HAL"], path: "Tests/MediaSupport"),
        // Re-runs test suites inside a umockdev testbed (Tests/Fixtures/umockdev emulate the devices).
        .target(name: "DeviceSupport", path: "Tests/DeviceSupport"),
        // Seeded random numbers and `eventually`, shared by every test target (issue 20).
        .target(name: "TestKit", dependencies: ["HAL"], path: "Tests/TestKit"),
        // BLEProtocol's own tests: the Security Manager's codec, functions (the specification's
        // sample data) and the two roles paired against each other, all in-process and quick.
        .testTarget(name: "BLEProtocolTests", dependencies: ["BLEProtocol", "HAL"], path: "Tests/BLEProtocolTests"),
        .testTarget(name: "TransportsTests", dependencies: ["Transports", "BLEProtocol", "HAL", "HALFakes", "LinuxIO", "CBlueZ", "PeerSupport", "TestKit"], path: "Tests/TransportsTests",
                    exclude: ["Fixtures"]),
        .testTarget(name: "VirtualControllerTests",
                    dependencies: ["VirtualController", "Peripherals", "BLEProtocol", "Transports", "HAL", "HALFakes", "Flows", "MirrorV1", "StandardScale", "SerialTestSupport", "TestKit"],
                    path: "Tests/VirtualControllerTests"),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "HAL", "HALFakes", "LinuxIO", "MediaSupport", "DeviceSupport", "TestKit", "CPixelKernels"], path: "Tests/CaptureTests"),
        // One serial executor for every test that must know when the code under test has settled.
        .target(name: "SerialTestSupport", dependencies: ["HAL", "HALFakes"], path: "Tests/SerialTestSupport"),
        .testTarget(name: "FlowsTests", dependencies: ["Flows", "HAL", "HALFakes", "MirrorV1", "SerialTestSupport", "TestKit"], path: "Tests/FlowsTests", exclude: ["Snapshots"]),
        // The pad tests run the pad-probe helper under umockdev (fixtures in Tests/Fixtures/umockdev).
        .testTarget(name: "PluginsTests", dependencies: ["HAL", "HALFakes", "Transports", "DeviceSupport", "TestKit"] + driverTargets.map { .target(name: $0.name) },
                    path: "Tests/PluginsTests"),
        .testTarget(name: "hwprobeTests", dependencies: ["hwprobe", "HAL", "Transports", "Capture", "Flows", "PeerSupport", "MediaSupport", "DeviceSupport",
                                                      "VirtualController", "Peripherals", "SerialTestSupport", "MirrorV1", "HALFakes"], path: "Tests/hwprobeTests"),
    ] + driverTargets
)
