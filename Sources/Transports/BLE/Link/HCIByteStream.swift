/// The bytes of an HCI transport, before any framing: what the H4 framer above reads and writes.
///
/// Three implementations exist (user-channel socket, H4 over a serial port, H4 over TCP) so the
/// host stack above never knows which one it runs on. Packet boundaries are *not* part of this
/// contract: a TCP or serial stream may split or merge packets however it likes, so the H4 framer
/// reassembles them from the byte stream (the user channel happens to deliver whole packets, which
/// the framer handles just the same).
public protocol HCIByteStream: Sendable {
    /// Names the device for messages, in URI form (`tcp:127.0.0.1:9101`).
    var description: String { get }

    /// Sends `bytes` completely, in order with other writes (writes are serialized).
    /// On the user channel `bytes` must be exactly one H4 packet, type byte included.
    func write(_ bytes: [UInt8]) async throws(HCILinkError)

    /// The bytes read, chunk by chunk exactly as read. Finishes with an ``HCILinkError`` when the
    /// peer closes or the device vanishes, and without error after ``close()``. One consumer only:
    /// a second call gets a stream that fails at once rather than silently stealing chunks.
    func incoming() -> AsyncThrowingStream<[UInt8], any Error>

    /// Stops reading, ends ``incoming()`` and releases the device. Idempotent; never hangs.
    func close() async
}
