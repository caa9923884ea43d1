import Glibc

/// Baud rates termios can name. Linux's B* constants are codes, not numbers, so every rate needs
/// an entry here; a rate without one is refused up front instead of silently becoming 38400.
enum SerialBaudRate {
    static let table: [(rate: Int, speed: speed_t)] = [
        (9600, speed_t(B9600)), (19200, speed_t(B19200)), (38400, speed_t(B38400)), (57600, speed_t(B57600)),
        (115_200, speed_t(B115200)), (230_400, speed_t(B230400)), (460_800, speed_t(B460800)),
        (500_000, speed_t(B500000)), (576_000, speed_t(B576000)), (921_600, speed_t(B921600)),
        (1_000_000, speed_t(B1000000)), (1_152_000, speed_t(B1152000)), (1_500_000, speed_t(B1500000)),
        (2_000_000, speed_t(B2000000)), (2_500_000, speed_t(B2500000)), (3_000_000, speed_t(B3000000)),
        (3_500_000, speed_t(B3500000)), (4_000_000, speed_t(B4000000)),
    ]

    static var supported: [Int] { table.map(\.rate) }

    static func speed(for rate: Int) -> speed_t? {
        table.first { $0.rate == rate }?.speed
    }
}
