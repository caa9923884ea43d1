import Foundation

let code = await HWProbe(console: .standard()).run(Array(CommandLine.arguments.dropFirst()))
exit(code)
