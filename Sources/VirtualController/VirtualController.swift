import HAL
import Peripherals
import Synchronization
import Transports

/// An in-process LE controller with virtual peripherals around it, reached as an H4 byte stream:
/// what `--hci sim:` gives our host stack, and what host tests run against on a manual clock.
///
/// Everything happens in `ControllerCore`, a value fed the host's bytes and the time; this class
/// only carries bytes in and out and keeps one timer on the injected clock for the core's next
/// deadline. Writes are answered before `write` returns (as fast as a controller can be), and the
/// host reads the answers through `incoming()` at its own pace: what the host has not read is
/// bounded by the configuration's queue limits, past which reports are dropped and peripherals
/// held back, as a controller with full buffers does.
public final class VirtualController: HCIByteStream {
    /// Names the controller in errors and logs (`sim:`, `replay:FILE`).
    public let description: String
    private let timebase: Timebase
    private let state: Mutex<State>

    /// The largest chunk `incoming()` yields at once.
    static let chunkLimit = 16 * 1024

    private struct State {
        var core: ControllerCore
        var closed = false
        var incomingTaken = false
        /// The reader waiting for bytes, if it is waiting.
        var reader: CheckedContinuation<[UInt8]?, Never>?
        var timer: (deadline: Duration, generation: UInt64, task: Task<Void, Never>)?
        var timerGeneration: UInt64 = 0
    }

    package init(peripherals: [any VirtualPeripheral], clock: any Clock<Duration>,
                configuration: ControllerConfiguration = ControllerConfiguration(), description: String = "sim:") {
        self.description = description
        timebase = Timebase(clock)
        state = Mutex(State(core: ControllerCore(configuration: configuration, peripherals: peripherals)))
    }

    package var configuration: ControllerConfiguration { state.withLock { $0.core.configuration } }

    // MARK: HCIByteStream

    /// Takes H4 bytes from the host as a controller's UART would: commands and ACL data, any split.
    public func write(_ bytes: [UInt8]) async throws(HCILinkError) {
        let now = timebase.now
        let (reader, chunk, closed) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, [UInt8]?, Bool) in
            guard !state.closed else { return (nil, nil, true) }
            state.core.hostWrote(bytes, at: now)
            rearm(&state)
            return handOver(&state, at: now)
        }
        if closed { throw .closed(description) }
        reader?.resume(returning: chunk)
    }

    /// The H4 bytes the controller sends the host: events and ACL data, in order.
    public func incoming() -> AsyncThrowingStream<[UInt8], any Error> {
        let first = state.withLock { state in
            defer { state.incomingTaken = true }
            return !state.incomingTaken
        }
        guard first else {
            let error = HCILinkError.io("\(description): incoming() was already called; it has exactly one consumer")
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        return AsyncThrowingStream(unfolding: { [self] in await self.nextChunk() })
    }

    /// Stops the controller: its timer (which drives the peripherals) is cancelled and `incoming()` finishes.
    public func close() async {
        let (reader, timer) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, Task<Void, Never>?) in
            state.closed = true
            defer {
                state.reader = nil
                state.timer = nil
            }
            return (state.reader, state.timer?.task)
        }
        timer?.cancel()
        reader?.resume(returning: nil)
    }

    /// The next chunk for the host, waiting for one; nil once closed (or when the reader is cancelled).
    private func nextChunk() async -> [UInt8]? {
        let now = timebase.now
        let ready = state.withLock { state -> [UInt8]?? in
            if let chunk = state.core.takeOutput(upTo: Self.chunkLimit, at: now) {
                rearm(&state)
                return .some(chunk)
            }
            return state.closed ? .some(nil) : nil
        }
        if let ready { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<[UInt8]?, Never>) in
                let now = timebase.now
                let chunk = state.withLock { state -> [UInt8]?? in
                    if state.closed || Task.isCancelled { return .some(nil) }
                    if let chunk = state.core.takeOutput(upTo: Self.chunkLimit, at: now) {
                        rearm(&state)
                        return .some(chunk)
                    }
                    state.reader = waiter
                    return nil
                }
                if let chunk { waiter.resume(returning: chunk) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
                defer { state.reader = nil }
                return state.reader
            }
            waiter?.resume(returning: nil)
        }
    }

    /// A waiting reader gets the next chunk; returns what to resume it with (outside the lock).
    private func handOver(_ state: inout State, at now: Duration) -> (CheckedContinuation<[UInt8]?, Never>?, [UInt8]?, Bool) {
        guard let reader = state.reader, let chunk = state.core.takeOutput(upTo: Self.chunkLimit, at: now) else { return (nil, nil, false) }
        state.reader = nil
        rearm(&state)
        return (reader, chunk, false)
    }

    // MARK: time

    /// One sleeper on the clock, for the core's earliest deadline.
    private func rearm(_ state: inout State) {
        let next = state.core.nextDeadline
        if state.timer?.deadline == next { return }
        state.timer?.task.cancel()
        state.timer = nil
        guard let next, !state.closed else { return }
        state.timerGeneration += 1
        let generation = state.timerGeneration
        let timebase = timebase
        let task = Task { [weak self] in
            do { try await timebase.sleep(until: next) } catch { return }
            self?.timerFired(generation)
        }
        state.timer = (next, generation, task)
    }

    private func timerFired(_ generation: UInt64) {
        let now = timebase.now
        let (reader, chunk, _) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, [UInt8]?, Bool) in
            guard state.timer?.generation == generation, !state.closed else { return (nil, nil, false) }
            state.timer = nil
            state.core.advance(to: now)
            rearm(&state)
            return handOver(&state, at: now)
        }
        reader?.resume(returning: chunk)
    }

    // MARK: for tests and the bench

    /// Something a peripheral does by itself (ends its link, vanishes, asks for new parameters).
    package func peripheral(_ address: BLEAddress, does action: PeripheralAction) {
        let now = timebase.now
        let (reader, chunk, _) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, [UInt8]?, Bool) in
            guard let index = state.core.slots.firstIndex(where: { $0.peripheral.address == address }) else { return (nil, nil, false) }
            state.core.perform([action], slot: index, at: now)
            state.core.settle(now)
            rearm(&state)
            return handOver(&state, at: now)
        }
        reader?.resume(returning: chunk)
    }

    /// Changes one peripheral of type `P` in place (a scale stepped on, say) and runs whatever
    /// that made due at once; false when no peripheral at `address` is a `P`.
    @discardableResult
    package func updatePeripheral<P: VirtualPeripheral>(_ address: BLEAddress, as type: P.Type, _ change: (inout P) -> Void) -> Bool {
        let now = timebase.now
        let (found, reader, chunk) = state.withLock { state -> (Bool, CheckedContinuation<[UInt8]?, Never>?, [UInt8]?) in
            guard let index = state.core.slots.firstIndex(where: { $0.peripheral.address == address }),
                  var peripheral = state.core.slots[index].peripheral as? P else { return (false, nil, nil) }
            change(&peripheral)
            state.core.slots[index].peripheral = peripheral
            state.core.advance(to: now)
            rearm(&state)
            let (reader, chunk, _) = handOver(&state, at: now)
            return (true, reader, chunk)
        }
        reader?.resume(returning: chunk)
        return found
    }

    /// A look at one peripheral as it is now.
    package func peripheral<P: VirtualPeripheral>(_ address: BLEAddress, as type: P.Type) -> P? {
        state.withLock { state in state.core.slots.first { $0.peripheral.address == address }?.peripheral as? P }
    }

    package var counters: ControllerCounters { state.withLock { $0.core.counters } }
    /// Connection handles of the links up now, lowest first.
    package var connectionHandles: [UInt16] { state.withLock { $0.core.links.keys.sorted() } }
    package var isScanning: Bool { state.withLock { $0.core.scanner != nil } }
    package var isInitiating: Bool { state.withLock { $0.core.initiator != nil } }
    /// Bytes the host has not read yet.
    package var pendingBytes: Int { state.withLock { $0.core.out.bytes } }
    /// The parameters of a link, when it is up (intervals 1.25 ms, timeout 10 ms units).
    package func parameters(of handle: UInt16) -> (interval: UInt16, latency: UInt16, timeout: UInt16)? {
        state.withLock { state in state.core.links[handle].map { ($0.interval, $0.latency, $0.timeout) } }
    }
}
