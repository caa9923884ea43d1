import BLEProtocol
import Foundation
import HAL
import Testing
@testable import Transports

/// Real bytes: a btsnoop capture of `hwprobe gatt` against the bumble peer (scan with extended
/// advertising reports, connect, MTU exchange, full discovery, disconnect), recorded with
/// `--btsnoop` into Tests/TransportsTests/Fixtures/gatt-discovery.btsnoop. Every packet must parse.
@Suite struct CapturedTrafficTests {
    static var capturePath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/gatt-discovery.btsnoop").path
    }

    @Test func everyPacketOfARealSessionParses() throws {
        let capture = try BTSnoopReader.read(path: Self.capturePath)
        #expect(capture.records.count > 40)
        var events: [HCIEvent] = []
        var att: [ATTPDU] = []
        var commands: [HCICommand] = []
        var framer = H4Framer()
        for record in capture.records {
            let packets = try framer.feed(record.packet)
            #expect(packets.count == 1, "one record, one packet")
            for packet in packets {
                switch packet {
                case .event(let raw): events.append(try HCIEvent(parsing: raw))
                case .command(let command): commands.append(command)
                case .acl(let acl):
                    let frame = try L2CAPFrame(parsing: acl.data)
                    if frame.channel == L2CAPFrame.att { att.append(try ATTPDU(parsing: frame.payload)) }
                case .other: Issue.record("no SCO or ISO in an LE session")
                }
            }
        }
        #expect(framer.bufferedByteCount == 0)
        #expect(commands.first == .reset)
        #expect(events.contains { if case .leAdvertisingReports(let r) = $0 { !r.isEmpty } else { false } })
        #expect(events.contains { if case .leConnectionComplete(let c) = $0 { c.status == 0 } else { false } })
        #expect(events.contains { if case .numberOfCompletedPackets = $0 { true } else { false } })
        #expect(events.contains { if case .disconnectionComplete = $0 { true } else { false } })
        #expect(att.contains { if case .exchangeMTUResponse = $0 { true } else { false } })
        #expect(att.contains { if case .readByGroupTypeResponse(let entries) = $0 { !entries.isEmpty } else { false } })
        #expect(att.contains { if case .readByTypeResponse = $0 { true } else { false } })
        #expect(att.contains { if case .findInformationResponse = $0 { true } else { false } })
        // The advertisement in the capture is the peer's.
        let reports: [LEAdvertisingReport] = events.flatMap { event -> [LEAdvertisingReport] in
            if case .leAdvertisingReports(let r) = event { r } else { [] }
        }
        let names = reports.compactMap { report in try? AdvertisingData.parse(report.data).localName }
        #expect(names.contains("hwprobe-peer"))
    }

    @Test func theWholeCaptureFramesTheSameInEverySplit() throws {
        let capture = try BTSnoopReader.read(path: Self.capturePath)
        let stream = capture.records.filter { !$0.sentByHost }.flatMap(\.packet)
        var whole = H4Framer()
        let expected = try whole.feed(stream)
        for size in [1, 2, 3, 7, 64, 1000] {
            var framer = H4Framer()
            var packets: [HCIPacket] = []
            var offset = 0
            while offset < stream.count {
                let end = min(offset + size, stream.count)
                packets += try framer.feed(stream[offset..<end])
                offset = end
            }
            #expect(packets == expected, "chunks of \(size)")
        }
    }
}
