import Foundation
import HAL
import LinuxIO
import Transports

/// `hwprobe watch` (docs/cli.md): what appears and disappears while it runs.
/// Controllers, cameras, haptic devices and serial ports are looked at again whenever the kernel
/// announces a hotplug event in their subsystems (netlink uevents: no polling); peripherals come
/// from advertisements on each `--hci` and go after 10 s unheard. It starts with an `added` event
/// for everything present, and ends at `--seconds` or Ctrl-C (exit 0 either way).
struct WatchCommand: Sendable {
    var console: Console
    var registry: DriverRegistry
    var sources: ListSources
    var transports: TransportFactory
    /// The hotplug events, or why there are none; tests hand in their own.
    var hotplug: @Sendable () throws(Errno) -> (any HotplugSource) = { () throws(Errno) in try KernelHotplug() }

    /// Subsystems whose events can change what `list` shows.
    static let subsystems: Set<String> = ["video4linux", "input", "hidraw", "tty", "bluetooth", "usb", "usbmisc"]

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        var uris: [DeviceURI] = []
        for text in invocation.all("--hci") { uris.append(try DeviceURIArgument.parse(text, option: "--hci")) }
        var limit: Duration?
        if let text = invocation.value("--seconds") {
            guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
                throw CLIFailure(kind: .usage, message: "--seconds must be a number of seconds more than 0 and at most 86400, e.g. 30")
            }
            limit = .milliseconds(Int64(seconds * 1000))
        }
        let clock = uris.first.map { transports.clock(for: $0) } ?? ContinuousClock()
        await watch(uris: uris, limit: limit, json: invocation.wantsJSON, clock: clock)
        return ExitCode.success
    }

    private func watch<C: Clock<Duration>>(uris: [DeviceURI], limit: Duration?, json: Bool, clock: C) async {
        let start = clock.now
        let state = Locked(WatchState())
        let console = console
        let emit: @Sendable ([WatchState.Event]) -> Void = { events in
            guard !events.isEmpty else { return }
            let elapsed = start.duration(to: clock.now)
            for event in events {
                console.out(json ? WatchState.line(event, at: elapsed) : Self.human(event, at: elapsed))
            }
        }
        let list = ListCommand(registry: registry, sources: sources, transports: transports)
        let local: @Sendable () async -> Void = {
            let report = await list.report(hciURIs: [], scanFor: .zero)
            let events = state.withLock { $0.snapshot(report) }
            emit(events)
        }
        await local()
        let hotplug: (any HotplugSource)?
        do throws(Errno) { hotplug = try self.hotplug() } catch {
            hotplug = nil
            console.diagnostic("hwprobe: cannot hear hotplug events (\(error)): controllers, cameras, pads and serial ports are shown as they were at the start")
        }
        let interrupted = AsyncStream.makeStream(of: Void.self)
        let interrupt = SignalHandling.shared.onInterrupt { interrupted.continuation.yield() }
        defer { interrupt.end() }
        await withTaskGroup(of: Void.self) { group in
            if let hotplug {
                group.addTask {
                    // A burst of events (a pad brings input, hidraw and usb ones) is one look.
                    while !Task.isCancelled {
                        guard let event = await hotplug.next(within: .milliseconds(250)) else { continue }
                        guard event.subsystem.map(Self.subsystems.contains) ?? false else { continue }
                        while await hotplug.next(within: .milliseconds(100)) != nil {}
                        await local()
                    }
                }
            }
            for uri in uris {
                group.addTask {
                    do {
                        let central = try await transports.central(for: uri, snoopPath: nil)
                        defer { Task { await central.close() } }
                        for try await device in central.discover() {
                            let peripheral = list.peripheral(device, hci: uri.description)
                            let now = start.duration(to: clock.now)
                            let (event, overLimit) = state.withLock { state in
                                let wasOver = state.overLimit
                                return (state.heard(peripheral, at: now), state.overLimit && !wasOver)
                            }
                            if overLimit {
                                console.diagnostic("hwprobe: watch follows at most \(WatchState.peripheralLimit) peripherals; others are not shown")
                            }
                            if let event { emit([event]) }
                        }
                    } catch {
                        console.diagnostic("hwprobe: \(uri): \(error)")
                    }
                }
            }
            if !uris.isEmpty {
                group.addTask {
                    while !Task.isCancelled {
                        guard (try? await clock.sleep(for: .milliseconds(500))) != nil else { return }
                        let now = start.duration(to: clock.now)
                        emit(state.withLock { $0.sweep(at: now) })
                    }
                }
            }
            // The end: --seconds, or Ctrl-C.
            group.addTask {
                if let limit {
                    await withTaskGroup(of: Void.self) { end in
                        end.addTask { try? await clock.sleep(for: limit) }
                        end.addTask { for await _ in interrupted.stream { return } }
                        _ = await end.next()
                        end.cancelAll()
                    }
                } else {
                    for await _ in interrupted.stream { return }
                }
            }
            _ = await group.next()
            group.cancelAll()
        }
    }

    static func human(_ event: WatchState.Event, at time: Duration) -> String {
        let mark = switch event.kind { case .added: "+"; case .removed: "-"; case .changed: "~" }
        let seconds = time.inSeconds
        return String(format: "%7.1f s  ", seconds) + "\(mark) \(event.section): \(event.summary.isEmpty ? event.device : event.summary)\n"
    }
}

/// Where hotplug events come from: the kernel's netlink socket, or a test's script.
protocol HotplugSource: Sendable {
    /// The next event, or nil when none came within `limit` (or the task was cancelled).
    func next(within limit: Duration) async -> UEvent?
}

/// The kernel's uevents, read on a thread of their own so a wait never holds a pool thread.
final class KernelHotplug: HotplugSource {
    private let socket: UEventSocket
    private let queue = BlockingWork.Queue(label: "hwprobe.hotplug")

    init() throws(Errno) { socket = try UEventSocket() }

    func next(within limit: Duration) async -> UEvent? {
        guard !Task.isCancelled else { return nil }
        // Rounded up: a wait never ends before its limit and then polls again at once.
        let milliseconds = limit.pollMilliseconds()
        let socket = socket
        return await queue.run { (try? socket.next(timeoutMilliseconds: milliseconds)) ?? nil }
    }
}
