import Foundation

// A reader that went away (`hwprobe list | head -1`) makes writes fail with EPIPE, which
// `writeFully` ignores, instead of a signal that kills the process mid-flow.
signal(SIGPIPE, SIG_IGN)
let code = await HWProbe(console: .standard()).run(Array(CommandLine.arguments.dropFirst()))
exit(code)
