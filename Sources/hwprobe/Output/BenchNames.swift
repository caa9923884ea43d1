import HAL
import MirrorV1

extension BluetoothNames {
    /// The names hwprobe words UUIDs with (`gatt`'s dump and JSON, `-v`): the SIG's and those of
    /// the profiles its plugins speak (today the mirror's), in one table so a UUID is never
    /// called two things.
    static let bench = BluetoothNames(profiles: MirrorGATT.names)
}
