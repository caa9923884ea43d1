import HAL

/// The mirror's side of docs/mirror-gatt-v1.md's byte layouts (little-endian, weights in 0.005 kg).
/// Written from the specification, not from the driver's parser, so the two meet as two
/// implementations of one text would.
enum MirrorProfileValues {
    /// `7B9E00XX-3C2A-4F1B-9E6D-5A4C3B2A1F00` (XX 01 the service, 02… its characteristics),
    /// spelled from the spec as this peripheral's own, like the rest of its values.
    static func uuid(_ id: UInt8) -> BluetoothUUID {
        BluetoothUUID(high: 0x7B9E_0000_3C2A_4F1B | UInt64(id) << 32, low: 0x9E6D_5A4C_3B2A_1F00)
    }

    /// The mirror service.
    static let service = uuid(0x01)

    static func deviceInfo(_ info: MirrorInfo) -> [UInt8] {
        [info.protocolVersion, info.firmwareMajor, info.firmwareMinor, info.firmwarePatch, info.batteryPercent ?? 0xFF]
    }

    /// State, progress (0 outside scanning and processing), error code (0 outside error).
    static func scanState(_ status: MirrorScanStatus) -> [UInt8] {
        let progress = status.state == .scanning || status.state == .processing ? status.progress : 0
        return [status.state.rawValue, progress, status.state == .error ? status.error?.code ?? 0xFF : 0]
    }

    /// Flags (bit 0 present, 1 occupied, 2 stable, 3 level), weight.
    static func scale(_ status: ScaleStatus) -> [UInt8] {
        var flags: UInt8 = 0
        if status.present { flags |= 0x01 }
        if status.occupied { flags |= 0x02 }
        if status.stable { flags |= 0x04 }
        if status.level { flags |= 0x08 }
        return [flags] + LittleEndian.u16(weightUnits(status.kilograms))
    }

    /// Angle (signed degrees), distance (cm), flags (bit 0 aligned).
    static func alignment(_ alignment: Alignment) -> [UInt8] {
        [UInt8(bitPattern: alignment.angleDegrees), alignment.distanceCm, alignment.aligned ? 0x01 : 0x00]
    }

    /// Scan id, weight, body fat (0.1 %), point count.
    static func result(_ result: ScanResult) -> [UInt8] {
        let fat = UInt16(clamping: Int((result.bodyFatPercent * 10).rounded()))
        return LittleEndian.u32(result.scanID) + LittleEndian.u16(weightUnits(result.kilograms)) + LittleEndian.u16(fat) + LittleEndian.u32(result.pointCount)
    }

    static func weightUnits(_ kilograms: Double) -> UInt16 {
        guard kilograms.isFinite, kilograms > 0 else { return 0 }
        return UInt16(clamping: Int((kilograms / 0.005).rounded()))
    }
}
