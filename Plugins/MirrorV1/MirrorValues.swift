import HAL

/// The profile's byte layouts (docs/mirror-gatt-v1.md): little-endian, weights in 0.005 kg.
/// The readers are SPI so the fuzz target can feed them any bytes (`@_spi(Fuzzing) import MirrorV1`).
@_spi(Fuzzing) public enum MirrorValues {
    static func characteristic(_ xx: UInt8) -> BluetoothUUID {
        MirrorGATT.uuid(xx)
    }

    static let deviceInfo = characteristic(0x02)
    static let initialize = characteristic(0x03)
    static let scanToken = characteristic(0x04)
    static let scanState = characteristic(0x05)
    static let scale = characteristic(0x06)
    static let alignment = characteristic(0x07)
    static let control = characteristic(0x08)
    static let result = characteristic(0x09)

    /// The profile's ATT application errors (docs/mirror-gatt-v1.md): 0x80 not aligned,
    /// 0x81 not initialised, 0x82 not ready; any other code is passed on as it came.
    static func refusal(attCode: UInt8) -> ScaleError.Refusal {
        switch attCode {
        case 0x80: .notAligned
        case 0x81: .notInitialized
        case 0x82: .notReady
        default: .attError(attCode)
        }
    }

    static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    /// scanState (…05): state u8, progress u8 (0–100), error code u8 (read only in the error state);
    /// nil when short, the state is unknown or progress exceeds 100.
    @_spi(Fuzzing) public static func scanStatus(_ bytes: [UInt8]) -> MirrorScanStatus? {
        guard bytes.count >= 3, let state = MirrorScanState(rawValue: bytes[0]), bytes[1] <= 100 else { return nil }
        return MirrorScanStatus(state: state, progress: bytes[1], error: state == .error ? MirrorErrorCode(code: bytes[2]) : nil)
    }

    /// scale (…06): flags u8 (bit 0 present, 1 occupied, 2 stable, 3 level), weight u16 in 0.005 kg;
    /// nil when shorter than 3 bytes.
    @_spi(Fuzzing) public static func scaleStatus(_ bytes: [UInt8]) -> ScaleStatus? {
        guard bytes.count >= 3 else { return nil }
        let flags = bytes[0]
        return ScaleStatus(present: flags & 0x01 != 0, occupied: flags & 0x02 != 0, stable: flags & 0x04 != 0,
                           level: flags & 0x08 != 0, kilograms: Double(u16(bytes, 1)) * 5 / 1000)
    }

    /// alignment (…07): angle i8 in degrees, distance u8 in cm, bit 0 of byte 2 aligned;
    /// nil when shorter than 3 bytes.
    @_spi(Fuzzing) public static func alignment(_ bytes: [UInt8]) -> Alignment? {
        guard bytes.count >= 3 else { return nil }
        return Alignment(angleDegrees: Int8(bitPattern: bytes[0]), distanceCm: bytes[1], aligned: bytes[2] & 0x01 != 0)
    }

    /// deviceInfo (…02): protocol version, firmware major/minor/patch, battery % (0xFF unknown);
    /// nil when shorter than 5 bytes.
    @_spi(Fuzzing) public static func info(_ bytes: [UInt8]) -> MirrorInfo? {
        guard bytes.count >= 5 else { return nil }
        return MirrorInfo(protocolVersion: bytes[0], firmwareMajor: bytes[1], firmwareMinor: bytes[2], firmwarePatch: bytes[3],
                          batteryPercent: bytes[4] == 0xFF ? nil : bytes[4])
    }

    /// result (…09): scan ID u32, weight u16 in 0.005 kg, body fat u16 in 0.1 %, point count u32;
    /// nil when shorter than 12 bytes.
    @_spi(Fuzzing) public static func result(_ bytes: [UInt8]) -> ScanResult? {
        guard bytes.count >= 12 else { return nil }
        return ScanResult(scanID: u32(bytes, 0), kilograms: Double(u16(bytes, 4)) * 5 / 1000,
                          bodyFatPercent: Double(u16(bytes, 6)) / 10, pointCount: u32(bytes, 8))
    }

    /// The bytes each command writes, and where.
    static func write(_ command: MirrorCommand) -> (characteristic: BluetoothUUID, value: [UInt8]) {
        switch command {
        case .initialize(let height, let units):
            (initialize, [0x01, UInt8(height & 0xFF), UInt8(height >> 8), units.rawValue])
        case .scanToken(let token): (scanToken, token)
        case .confirmAlignment: (control, [0x01])
        case .startScan: (control, [0x02])
        case .abort: (control, [0x03])
        case .reset: (control, [0x04])
        }
    }
}
