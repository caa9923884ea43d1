import Foundation
import HAL
import Testing
@testable import Capture

@Suite struct Y4MReaderTests {
    /// A 5x3 picture whose luma bytes start at `base`, so each frame is recognisable.
    static func luma(_ base: UInt8) -> [UInt8] { (0..<15).map { base &+ UInt8($0) } }

    /// A hand-built file (not through Y4MWriter): header, then frames of luma + `extra` chroma bytes.
    static func file(header: String, frames: Int, extra: Int, frameLine: String = "FRAME") -> [UInt8] {
        var bytes = Array((header + "\n").utf8)
        for index in 0..<frames {
            bytes += Array((frameLine + "\n").utf8)
            bytes += luma(UInt8(index * 20))
            bytes += [UInt8](repeating: 0x55, count: extra)
        }
        return bytes
    }

    /// Chroma bytes after a 5x3 luma plane, worked out by hand for each colour space.
    static let colourSpaces: [(tag: String, extra: Int, space: Y4MColorSpace)] = [
        (" C420jpeg", 2 * 3 * 2, .c420jpeg),
        (" C420paldv", 2 * 3 * 2, .c420paldv),
        (" C420mpeg2", 2 * 3 * 2, .c420mpeg2),
        (" C420", 2 * 3 * 2, .c420),
        ("", 2 * 3 * 2, .c420jpeg), // no C tag means 4:2:0
        (" C422", 2 * 3 * 3, .c422),
        (" C411", 2 * 2 * 3, .c411),
        (" C444", 2 * 5 * 3, .c444),
        (" C444alpha", 3 * 5 * 3, .c444alpha),
        (" Cmono", 0, .mono),
    ]

    @Test(arguments: 0..<colourSpaces.count)
    func everyColourSpaceYieldsItsLumaPlane(_ index: Int) throws {
        let (tag, extra, space) = Self.colourSpaces[index]
        let dir = try TemporaryDirectory()
        let path = try dir.write(Self.file(header: "YUV4MPEG2 W5 H3 F25:1 Ip A1:1\(tag) XYSCSS=420JPEG", frames: 3, extra: extra,
                                           frameLine: index.isMultiple(of: 2) ? "FRAME" : "FRAME Ip XCOMMENT"),
                                 to: "v.y4m")
        let reader = try Y4MReader(path: path)
        #expect(reader.header.colorSpace == space)
        #expect(reader.header.width == 5 && reader.header.height == 3)
        #expect(reader.header.frameBytes == 15 + extra)
        var frames: [GrayFrame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        #expect(frames.count == 3)
        for (i, frame) in frames.enumerated() {
            #expect(frame.pixels == Self.luma(UInt8(i * 20)))
            #expect(frame.sequence == UInt64(i))
            #expect(frame.timestamp == .milliseconds(40 * i))
            #expect(frame.stride == 5)
        }
        #expect(try reader.nextFrame() == nil)
    }

    @Test func frameRateGivesTimestampsWithoutDrift() throws {
        let header = try Y4MHeader(parsing: Array("YUV4MPEG2 W2 H2 F30000:1001 C420mpeg2".utf8), source: "x")
        #expect(header.frameRateNumerator == 30000 && header.frameRateDenominator == 1001)
        #expect(header.timestamp(ofFrame: 30000) == .seconds(1001))
        #expect(header.frameInterval == .nanoseconds(33_366_666))
    }

    @Test func writerOutputReadsBack() throws {
        let dir = try TemporaryDirectory()
        for space in [Y4MColorSpace.mono, .c420jpeg] {
            let path = dir.path("w-\(space.rawValue).y4m")
            let writer = try Y4MWriter(path: path, width: 7, height: 5, frameRateNumerator: 15, colorSpace: space)
            let frames: [GrayFrame] = (0..<4).map { (i: Int) -> GrayFrame in
                let pixels: [UInt8] = (0..<35).map { (p: Int) -> UInt8 in UInt8((p * 7 + i * 3) & 0xFF) }
                return GrayFrame(width: 7, height: 5, pixels: pixels, timestamp: .zero, sequence: UInt64(i))
            }
            // A strided frame is written without its padding.
            try writer.write(ImageOps.padded(frames[0], padding: 3))
            for frame in frames.dropFirst() { try writer.write(frame) }
            writer.close()
            let text = try String(contentsOfFile: path, encoding: .isoLatin1)
            #expect(text.hasPrefix("YUV4MPEG2 W7 H5 F15:1 Ip A1:1 C\(space.rawValue)\n"))
            let reader = try Y4MReader(path: path)
            #expect(reader.header.colorSpace == space)
            var read: [GrayFrame] = []
            while let frame = try reader.nextFrame() { read.append(frame) }
            #expect(read.map(\.pixels) == frames.map(\.pixels))
            #expect(read.last?.timestamp == .milliseconds(200))
        }
    }

    @Test func largeFramesAreReadAcrossChunks() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("big.y4m")
        let writer = try Y4MWriter(path: path, width: 640, height: 480, colorSpace: .c420jpeg)
        for i in 0..<3 {
            try writer.write(GrayFrame(width: 640, height: 480, pixels: (0..<(640 * 480)).map { UInt8(($0 / 641 + i) & 0xFF) },
                                       timestamp: .zero, sequence: 0))
        }
        writer.close()
        let reader = try Y4MReader(path: path)
        for i in 0..<3 {
            let frame = try #require(try reader.nextFrame())
            #expect(frame.pixels.count == 640 * 480)
            #expect(frame.pixels[640 * 480 - 1] == UInt8(((640 * 480 - 1) / 641 + i) & 0xFF))
            #expect(frame.pixels[1000] == UInt8((1000 / 641 + i) & 0xFF))
        }
        #expect(try reader.nextFrame() == nil)
    }

    @Test func badMagicIsABadFile() throws {
        let dir = try TemporaryDirectory()
        for (name, bytes) in [("mpeg", Array("YUV4MPEG W5 H3\nFRAME\n".utf8)),
                              ("png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]),
                              ("glued", Array("YUV4MPEG2W5 H3\n".utf8))] {
            let path = try dir.write(bytes, to: name)
            let error = #expect(throws: CameraError.self) { try Y4MReader(path: path) }
            #expect(error?.badFileMessage.contains("is not a YUV4MPEG2 (.y4m) file") == true, "\(String(describing: error))")
        }
    }

    @Test func badHeadersSayWhatIsWrong() throws {
        let dir = try TemporaryDirectory()
        let cases: [(String, String)] = [
            ("YUV4MPEG2 H3 F30:1", "no width"),
            ("YUV4MPEG2 W5 F30:1", "no height"),
            ("YUV4MPEG2 W0 H3", "bad width 'W0'"),
            ("YUV4MPEG2 W5 Hx", "bad height 'Hx'"),
            ("YUV4MPEG2 W5 H3 F30", "bad frame rate 'F30'"),
            ("YUV4MPEG2 W5 H3 F0:1", "bad frame rate 'F0:1'"),
            ("YUV4MPEG2 W5 H3 C420p10", "colour space 'C420p10' is not supported"),
            ("YUV4MPEG2 W99999 H3", "bad width"),
        ]
        for (index, (header, message)) in cases.enumerated() {
            let path = try dir.write(Array((header + "\n").utf8), to: "h\(index).y4m")
            let error = #expect(throws: CameraError.self) { try Y4MReader(path: path) }
            #expect(error?.badFileMessage.contains(message) == true, "\(header): \(String(describing: error))")
        }
        let empty = try dir.write([], to: "empty.y4m")
        let emptyError = #expect(throws: CameraError.self) { try Y4MReader(path: empty) }
        #expect(emptyError?.badFileMessage.contains("is empty") == true)
        let endless = try dir.write(Array("YUV4MPEG2 W5 H3".utf8) + [UInt8](repeating: 0x41, count: 10_000), to: "endless.y4m")
        let endlessError = #expect(throws: CameraError.self) { try Y4MReader(path: endless) }
        #expect(endlessError?.badFileMessage.contains("header line is longer") == true)
    }

    @Test func missingFileIsNotFound() {
        #expect(throws: CameraError.notFound("/nonexistent/video.y4m")) { try Y4MReader(path: "/nonexistent/video.y4m") }
    }

    @Test func truncatedLastFrameEndsWithAnErrorAfterTheGoodFrames() throws {
        let dir = try TemporaryDirectory()
        let whole = Self.file(header: "YUV4MPEG2 W5 H3 F25:1 Cmono", frames: 3, extra: 0)
        let path = try dir.write(Array(whole.dropLast(4)), to: "cut.y4m")
        let reader = try Y4MReader(path: path)
        #expect(try reader.nextFrame()?.sequence == 0)
        #expect(try reader.nextFrame()?.sequence == 1)
        let error = #expect(throws: CameraError.self) { try reader.nextFrame() }
        #expect(error?.badFileMessage == "\(path): frame 3 is truncated: expected 15 bytes of picture (5x3 Cmono), the file ends after 11")
        #expect(try reader.nextFrame() == nil)
    }

    @Test func truncatedChromaIsATruncatedFrame() throws {
        let dir = try TemporaryDirectory()
        let whole = Self.file(header: "YUV4MPEG2 W5 H3 C444", frames: 2, extra: 30)
        let path = try dir.write(Array(whole.dropLast(1)), to: "cut.y4m")
        let reader = try Y4MReader(path: path)
        _ = try reader.nextFrame()
        let error = #expect(throws: CameraError.self) { try reader.nextFrame() }
        #expect(error?.badFileMessage.contains("frame 2 is truncated: expected 45 bytes") == true)
    }

    @Test func aFileEndingInsideAFrameLineIsTruncated() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write(Self.file(header: "YUV4MPEG2 W5 H3 Cmono", frames: 1, extra: 0) + Array("FRA".utf8), to: "cut.y4m")
        let reader = try Y4MReader(path: path)
        _ = try reader.nextFrame()
        let error = #expect(throws: CameraError.self) { try reader.nextFrame() }
        #expect(error?.badFileMessage.contains("frame 2 is truncated: the file ends inside its FRAME line") == true)
    }

    @Test func aWrongFrameSizeShowsAsAMissingFrameMarker() throws {
        let dir = try TemporaryDirectory()
        // Written as 4:2:0 but declared mono: the second FRAME marker is not where it should be.
        let path = try dir.write(Self.file(header: "YUV4MPEG2 W5 H3 Cmono", frames: 2, extra: 12), to: "wrong.y4m")
        let reader = try Y4MReader(path: path)
        _ = try reader.nextFrame()
        let error = #expect(throws: CameraError.self) { try reader.nextFrame() }
        #expect(error?.badFileMessage.contains("frame 2 does not start with 'FRAME'") == true)
    }

    /// 45 bytes that claim a 16384×16384 picture (issue 15): the reader used to allocate the
    /// whole 256 MiB plane (the process grew to 283 MiB) before finding the file too short. Now
    /// that size is over the pixel limit, refused at the header; and a claim under the limit
    /// (6000×6000, 34 MiB) is checked against what the file still holds before any allocation.
    @Test func aHugeFrameClaimInATinyFileAllocatesNothing() throws {
        let dir = try TemporaryDirectory()
        let before = Self.peakResidentKiB()
        let huge = try dir.write(Array("YUV4MPEG2 W16384 H16384 F25:1 Cmono\nFRAME\n".utf8) + [1, 2, 3], to: "huge.y4m")
        #expect(try FileManager.default.attributesOfItem(atPath: huge)[.size] as? Int == 45)
        let refused = #expect(throws: CameraError.self) {
            let reader = try Y4MReader(path: huge)
            _ = try reader.nextFrame()
        }
        #expect(refused?.badFileMessage.contains("pixels") == true, "\(refused?.badFileMessage ?? "no error")")
        let claim = try dir.write(Array("YUV4MPEG2 W6000 H6000 F25:1 Cmono\nFRAME\n".utf8) + [1, 2, 3], to: "claim.y4m")
        let reader = try Y4MReader(path: claim)
        let error = #expect(throws: CameraError.self) { try reader.nextFrame() }
        let grown = Self.peakResidentKiB() - before
        #expect(error?.badFileMessage.contains("frame 1 is truncated: expected 36000000 bytes of picture (6000x6000 Cmono), the file ends after 3") == true,
                "\(error?.badFileMessage ?? "no error")")
        #expect(grown < 16 * 1024, "the peak resident size grew by \(grown / 1024) MiB reading 45-byte files")
    }

    /// A picture larger than any camera makes is refused even when the file is that large
    /// (a sparse file costs nothing to make): 16384×16384 C444 is 768 MiB a frame. Refused at
    /// the header, before any frame (the old reader returned a 256 MiB frame, its peak 2.8 GB).
    @Test func aFrameLargerThanThePixelLimitIsRefused() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write(Array("YUV4MPEG2 W16384 H16384 F25:1 C444\nFRAME\n".utf8), to: "sparse.y4m")
        #expect(truncate(path, 16384 * 16384 * 3 + 100) == 0)
        let before = Self.peakResidentKiB()
        var frames = 0
        let error = #expect(throws: CameraError.self) {
            let reader = try Y4MReader(path: path)
            while try reader.nextFrame() != nil { frames += 1 } // never a frame's description: it would be 256 MiB of text
        }
        #expect(frames == 0)
        #expect((Self.peakResidentKiB() - before) < 32 * 1024)
        #expect(error?.badFileMessage.contains("268435456 pixels, more than the 40000000") == true, "\(error?.badFileMessage ?? "no error")")
    }

    /// From a pipe nothing says how much is left: the plane grows only as bytes arrive. An
    /// anonymous pipe, as a shell's `|` gives one (`/dev/fd/N`): a named FIFO is refused (issue 27).
    @Test func aHugeFrameClaimFromAPipeCostsOnlyWhatArrives() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let writer = Thread {
            let bytes = Array("YUV4MPEG2 W6000 H6000 F25:1 Cmono\nFRAME\n".utf8) + [UInt8](repeating: 7, count: 1000)
            _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            close(writeEnd)
        }
        writer.start()
        let reader = try Y4MReader(path: "/dev/fd/\(readEnd)")
        let before = Self.peakResidentKiB()
        let error = #expect(throws: CameraError.self) { try reader.nextFrame() }
        #expect((Self.peakResidentKiB() - before) < 8 * 1024, "36 MB claimed, 1000 bytes sent")
        #expect(error?.badFileMessage.contains("frame 1 is truncated: expected 36000000 bytes") == true)
        #expect(error?.badFileMessage.contains("the file ends after 1000") == true)
    }

    static func peakResidentKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }
}
