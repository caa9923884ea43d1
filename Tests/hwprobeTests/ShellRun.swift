import Foundation

/// Runs a program to its end and collects what it printed.
enum ShellRun {
    struct Result {
        var code: Int32
        var out: String
        var err: String
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    directory: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        // stderr goes to a file, so neither stream can fill up and stall the process while the
        // other is read.
        let errPath = FileManager.default.temporaryDirectory.appending(path: "hwprobe-run-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errPath.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errPath) }
        let out = Pipe()
        let err = try FileHandle(forWritingTo: errPath)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try err.close()
        let errData = (try? Data(contentsOf: errPath)) ?? Data()
        return Result(code: process.terminationStatus, out: String(decoding: outData, as: UTF8.self),
                      err: String(decoding: errData, as: UTF8.self))
    }

    static func exists(_ path: String) -> Bool { FileManager.default.isExecutableFile(atPath: path) }
}
