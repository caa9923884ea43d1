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

/// What a host runs where a stream's bytes arrive: the framing and parsing that would otherwise
/// cost a hop to another thread for every chunk.
///
/// Why: a notification used to cross three threads (the link's reader, the host actor, the
/// subscriber), three wake-ups for every arrival. A receiver is called on the reading thread
/// itself, in order, one chunk at a time, so the bytes are read, parsed and delivered where they
/// arrive; only what needs the host's own state (events, signalling) is handed on.
package protocol HCIChunkReceiver: Sendable {
    /// One chunk exactly as read, valid only during the call. Returns true when someone downstream
    /// is behind: the reading side then calls ``waitForRoom()`` before it reads on, so the
    /// kernel's flow control holds the controller back instead of the process buffering.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Returns once there is room again (bounded: every wait behind it has a deadline), or the
    /// caller is cancelled.
    func waitForRoom() async
    /// The stream ended: nil after a local close, else why. Called once, after the last chunk.
    func ended(_ failure: HCILinkError?)
}

/// A byte stream with a reading thread of its own that can run a receiver on that thread
/// (every descriptor-backed transport). Streams without one are read by a task instead.
package protocol HCIReceivingStream: HCIByteStream {
    /// Hands every chunk, those already read first, to `receiver` on the reading thread instead
    /// of ``HCIByteStream/incoming()``; exactly one consumer, as for `incoming()`.
    func deliver(to receiver: any HCIChunkReceiver)
}

extension HCIByteStream {
    /// Feeds `receiver` from ``HCIByteStream/incoming()`` on a task of its own, for streams
    /// without a reading thread (the in-process controller, test doubles): the chunk is still
    /// parsed where it is taken, with no further hop. Returns the task, which ends with the stream.
    package func pump(into receiver: any HCIChunkReceiver) -> Task<Void, Never> {
        let incoming = incoming()
        return Task.detached {
            do {
                for try await chunk in incoming {
                    let behind = chunk.withUnsafeBytes { receiver.receive($0) }
                    if behind { await receiver.waitForRoom() }
                }
                receiver.ended(nil)
            } catch let error as HCILinkError {
                receiver.ended(error)
            } catch {
                receiver.ended(.io("\(error)"))
            }
        }
    }
}
