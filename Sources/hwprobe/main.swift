import Foundation
import LinuxIO

// A reader that went away (`hwprobe list | head -1`) makes writes fail with EPIPE, which
// `writeFully` ignores, instead of a signal that kills the process mid-flow.
SignalPipe.ignore(SIGPIPE)
let code = await HWProbe(console: .standard()).run(Array(CommandLine.arguments.dropFirst()))
exit(code)
