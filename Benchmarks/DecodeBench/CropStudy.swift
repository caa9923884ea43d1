import Capture
import Foundation
import HAL

/// `decode-bench --crop-study`: whether zbar's second opinion could look at the code-like region
/// alone (with a margin around it) instead of the whole frame, on the camera-like videos that
/// `--video` draws (run that first; the videos are read from its cache).
///
/// On every frame where zxing reads nothing and `CodeRegions` sees a code-like region (the
/// frames where the arrangement may give zbar a turn): zbar on the whole frame, then zbar on a crop
/// of each region grown by a margin (a fraction of the region's longer side on every side). A
/// crop is worth it only if it reads what the whole frame reads: the table says, per margin, how
/// many of the whole frame's reads the crops kept, what they read that the whole frame did not,
/// and the CPU time per frame of each, on this thread.
enum CropStudy {
    static let margins: [Double] = [0.1, 0.25, 0.5, 1.0]

    static func run(paths: [String]) throws {
        print("")
        print("zbar on a code-like region's crop instead of the whole frame (frames where zxing read nothing and a region was seen)")
        for path in paths {
            let frames = try VideoBench.readAll(path)
            guard let first = frames.first else { continue }
            let zxing = ZXingDecoder()
            let zbar = ZBarDecoder()
            var studied = 0
            var whole = (reads: 0, nanoseconds: Int64(0))
            var crops = [(kept: Int, extra: Int, nanoseconds: Int64)](repeating: (0, 0, 0), count: margins.count)
            for frame in frames {
                guard zxing.decode(frame).isEmpty else { continue }
                let regions = CodeRegions.find(in: frame, limit: 3)
                guard !regions.isEmpty else { continue }
                studied += 1
                var start = threadCPUNanoseconds()
                let wholeRead = Set(zbar.decode(frame))
                whole.nanoseconds += threadCPUNanoseconds() - start
                whole.reads += wholeRead.count
                for (index, margin) in margins.enumerated() {
                    start = threadCPUNanoseconds()
                    let read = Set(regions.flatMap { zbar.decode(ZXingThenZBarDecoder.crop(frame, $0, margin: margin)) })
                    crops[index].nanoseconds += threadCPUNanoseconds() - start
                    crops[index].kept += read.intersection(wholeRead).count
                    crops[index].extra += read.subtracting(wholeRead).count
                }
            }
            let name = "\(first.width)x\(first.height)"
            let perFrame = { (ns: Int64) in studied == 0 ? "–" : String(format: "%.2f ms", Double(ns) / 1e6 / Double(studied)) }
            print("\(name): \(studied) of \(frames.count) frames studied; whole frame: \(whole.reads) reads, \(perFrame(whole.nanoseconds))/frame")
            for (index, margin) in margins.enumerated() {
                print(String(format: "  margin %.2f: kept %d of %d, %d more, ", margin, crops[index].kept, whole.reads, crops[index].extra)
                      + "\(perFrame(crops[index].nanoseconds))/frame"
                      + (whole.nanoseconds > 0 ? String(format: " (%.2f× the whole frame)", Double(crops[index].nanoseconds) / Double(whole.nanoseconds)) : ""))
            }
        }
    }
}
