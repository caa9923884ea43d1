// swift-tools-version: 6.0
// The package layout is part of the design: see ../shared/design/ARCHITECTURE.md.
import PackageDescription

/// System libraries come from Debian through pkg-config; the apt hint tells a newcomer what to install.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// Device drivers live one per folder under Plugins/ and may import HAL and Transports only.
func driver(_ name: String, folder: String) -> Target {
    .target(name: name, dependencies: ["HAL", "Transports"], path: "Plugins/\(folder)")
}

let driverTargets: [Target] = [
    driver("StandardScale", folder: "StandardScale"),
    driver("MiScale", folder: "MiScale"),
    driver("MirrorProfile", folder: "Mirror"),
    driver("Xbox360Pad", folder: "Xbox360Pad"),
    driver("DualShock4", folder: "DualShock4"),
    driver("EvdevRumble", folder: "EvdevRumble"),
]

let package = Package(
    name: "hwprobe",
    products: [
        .executable(name: "hwprobe", targets: ["hwprobe"]),
        .library(name: "HAL", targets: ["HAL"]),
        // For the fuzz targets only: Fuzz/ is a package of its own that depends on this one by
        // path (so the sanitizers never touch the normal build), and a package sees only
        // another package's products.
        .library(name: "Transports", targets: ["Transports"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Flows", targets: ["Flows"]),
    ] + driverTargets.map { .library(name: $0.name, targets: [$0.name]) },
    targets: [
        systemLibrary("CBlueZ", pkgConfig: "bluez", apt: "libbluetooth-dev"),
        systemLibrary("CLibUSB", pkgConfig: "libusb-1.0", apt: "libusb-1.0-0-dev"),
        systemLibrary("CV4L2", pkgConfig: "libv4l2", apt: "libv4l-dev"),
        systemLibrary("CZBar", pkgConfig: "zbar", apt: "libzbar-dev"),
        systemLibrary("CCrypto", pkgConfig: "libcrypto", apt: "libssl-dev"),
        // Thin C wrappers for what Swift cannot import: variadic ioctl/open and function-like ioctl macros.
        .target(name: "CLinuxShims", dependencies: ["CBlueZ"], path: "Sources/CLinuxShims"),

        // Typed Swift wrappers over CLinuxShims (file descriptors, errno, ioctl, sysfs) shared by
        // Transports and Capture, so device code reads as intent rather than as C.
        .target(name: "LinuxIO", dependencies: ["CLinuxShims"], path: "Sources/LinuxIO"),
        .target(name: "HAL", path: "Sources/HAL"),
        .target(name: "Transports", dependencies: ["HAL", "LinuxIO", "CLinuxShims", "CBlueZ", "CLibUSB"],
                path: "Sources/Transports"),
        .target(name: "Capture", dependencies: ["HAL", "LinuxIO", "CLinuxShims", "CV4L2", "CZBar"],
                path: "Sources/Capture"),
        .target(name: "Flows", dependencies: ["HAL", "CCrypto"], path: "Sources/Flows"),
        .executableTarget(
            name: "hwprobe",
            dependencies: ["HAL", "Transports", "Capture", "Flows"] + driverTargets.map { .target(name: $0.name) },
            path: "Sources/hwprobe"),

        .executableTarget(name: "ble-bench", dependencies: ["HAL", "Transports", "PeerSupport"], path: "Benchmarks/BLEBench"),
        .testTarget(name: "HALTests", dependencies: ["HAL"], path: "Tests/HALTests"),
        // Starts and talks to the bumble peers (Tests/Peers) for the real-path tests of several targets.
        .target(name: "PeerSupport", dependencies: ["HAL", "Transports"], path: "Tests/PeerSupport"),
        // QR pictures made by Debian's qrencode CLI, for the capture and import tests.
        .target(name: "MediaSupport", dependencies: ["HAL"], path: "Tests/MediaSupport"),
        // Re-runs test suites inside a umockdev testbed (Tests/Fixtures/umockdev emulate the devices).
        .target(name: "DeviceSupport", path: "Tests/DeviceSupport"),
        .testTarget(name: "TransportsTests", dependencies: ["Transports", "HAL", "LinuxIO", "PeerSupport"], path: "Tests/TransportsTests",
                    exclude: ["Fixtures"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "HAL", "LinuxIO", "MediaSupport", "DeviceSupport"], path: "Tests/CaptureTests"),
        .testTarget(name: "FlowsTests", dependencies: ["Flows", "HAL"], path: "Tests/FlowsTests", exclude: ["Snapshots"]),
        .testTarget(name: "PluginsTests", dependencies: ["HAL", "Transports", "DeviceSupport"] + driverTargets.map { .target(name: $0.name) },
                    path: "Tests/PluginsTests"),
        .testTarget(name: "hwprobeTests", dependencies: ["hwprobe", "HAL", "Transports", "Capture", "Flows", "PeerSupport", "MediaSupport", "DeviceSupport"], path: "Tests/hwprobeTests"),
    ] + driverTargets
)
