import Foundation
import HAL
import Testing
@testable import hwprobe

/// The completion scripts, run in the real shells: bash through its completion variables, fish
/// through `complete --do-complete`, zsh by typing into an interactive zsh on a pseudo-terminal.
@Suite struct CompletionScriptTests {
    let scratch: URL

    init() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "hwprobe-completions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        // A few files for the FILE options and path schemes to find.
        try FileManager.default.createDirectory(at: scratch.appending(path: "videos"), withIntermediateDirectories: true)
        for name in ["videos/backup.y4m", "password.txt"] {
            _ = FileManager.default.createFile(atPath: scratch.appending(path: name).path, contents: Data())
        }
    }

    func write(_ text: String, _ name: String) throws -> String {
        let path = scratch.appending(path: name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func hwprobeCompletionsPrintsEachShellsScript() async {
        for (shell, script) in [("bash", BashCompletion.script()), ("zsh", ZshCompletion.script()), ("fish", FishCompletion.script())] {
            let captured = CapturedConsole()
            let code = await HWProbe(console: captured.console, listSources: .empty).run(["completions", shell])
            #expect(code == 0)
            #expect(captured.stdout == script, "\(shell)")
        }
        #expect(ZshCompletion.script().hasPrefix("#compdef hwprobe\n"))
    }

    @Test func theScriptsAreMadeFromTheTable() {
        let bash = BashCompletion.script(), zsh = ZshCompletion.script(), fish = FishCompletion.script()
        for spec in Commands.all {
            #expect(bash.contains(spec.name), "\(spec.name)")
            for option in spec.allOptions {
                #expect(CompletionModel.isPlainWord(option.name), "\(option.name) would need quoting")
                #expect(bash.contains(option.name) && zsh.contains(option.name) && fish.contains("-l \(option.name.dropFirst(2))"), "\(spec.name) \(option.name)")
            }
        }
        for cue in HapticCue.allCases { #expect(bash.contains(cue.rawValue) && zsh.contains(cue.rawValue) && fish.contains(cue.rawValue)) }
    }

    // MARK: bash

    /// Completes `line` (the cursor at its end) the way bash would: COMP_LINE, COMP_POINT, and
    /// COMP_WORDS split at COMP_WORDBREAKS as readline splits them. Returns COMPREPLY.
    func bashComplete(_ line: String) throws -> [String] {
        let script = try write(BashCompletion.script(), "hwprobe.bash")
        let driver = """
        source \(ZshCompletion.quote(script)) || exit 9
        complete -p hwprobe >/dev/null || exit 8
        COMP_LINE=$1
        COMP_POINT=${#1}
        # readline's split: blanks separate words, each of COMP_WORDBREAKS' other characters is one.
        read -ra COMP_WORDS <<< "$(sed -E 's/([=:])/ \\1 /g' <<< "$1")"
        COMP_CWORD=${#COMP_WORDS[@]}
        [[ $1 == *' ' ]] || COMP_CWORD=$((COMP_CWORD - 1))
        _hwprobe
        (( ${#COMPREPLY[@]} == 0 )) || printf '%s\\n' "${COMPREPLY[@]}"
        """
        let result = try ShellRun.run("/bin/bash", ["--norc", "--noprofile", "-c", driver, "bash", line], directory: scratch)
        #expect(result.code == 0, "\(line): \(result.err)")
        #expect(result.err.isEmpty, "\(line): \(result.err)")
        return result.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        #expect(try bashComplete("hwprobe ") == Commands.all.map(\.name))
        #expect(try bashComplete("hwprobe sc") == ["scan"])
        #expect(try bashComplete("hwprobe -v li") == ["list"])                     // after a global option
        #expect(try bashComplete("hwprobe --btsnoop /tmp/x.btsnoop sc") == ["scan"]) // past a global option's value
        #expect(try bashComplete("hwprobe --json ").isEmpty)                      // list: nothing more to name
        #expect(try bashComplete("hwprobe --js") == ["--json"])                   // no command means list
        #expect(try bashComplete("hwprobe scan --h") == ["--help", "--hci", "--height-cm", "--haptics"])
        #expect(try bashComplete("hwprobe import --p") == ["--password-file"])
        #expect(try bashComplete("hwprobe haptics --cue s") == ["selection", "success"])
        #expect(try bashComplete("hwprobe completions ") == ["bash", "zsh", "fish"])
        #expect(try bashComplete("hwprobe help im") == ["import"])
    }

    @Test func bashOffersAnOptionAgainOnlyWhenItRepeats() throws {
        #expect(try bashComplete("hwprobe scan --hci sim: --hc").isEmpty)
        #expect(try bashComplete("hwprobe list --hci sim: --hc") == ["--hci"])
        #expect(try bashComplete("hwprobe --verbose list -").contains("-v") == false)
        #expect(try bashComplete("hwprobe -v list --verb").isEmpty)
    }

    @Test func bashCompletesDeviceURIsAndFiles() throws {
        #expect(try bashComplete("hwprobe scan --hci ") == ["hci:", "uart:", "tcp:", "sim:", "replay:"])
        #expect(try bashComplete("hwprobe import --camera ") == ["v4l2:", "file:", "sim:", "replay:"])
        #expect(try bashComplete("hwprobe haptics --device h") == ["hidraw:"])
        #expect(try bashComplete("hwprobe scan --hci sim: --haptics ") == ["usb:", "hidraw:", "evdev:", "log:", "bell:", "replay:"])
        // bash replaces only what follows the last ':' or '=', so that is what comes back.
        #expect(try bashComplete("hwprobe scan --hci=s") == ["sim:"])
        #expect(try bashComplete("hwprobe import --camera file:vid") == ["videos/"])
        #expect(try bashComplete("hwprobe import --camera file:videos/b") == ["videos/backup.y4m"])
        #expect(try bashComplete("hwprobe import --password-file pass") == ["password.txt"])
        #expect(try bashComplete("hwprobe --btsnoop vid") == ["videos/"])
        #expect(try bashComplete("hwprobe scan --hci uart:/dev/nul") == ["/dev/null"])
        // A value that is no file or URI gets nothing rather than files.
        #expect(try bashComplete("hwprobe list --scan-seconds ").isEmpty)
    }

    // MARK: fish

    func fishComplete(_ line: String) throws -> [String] {
        let script = try write(FishCompletion.script(), "hwprobe.fish")
        let result = try ShellRun.run("/usr/bin/fish", ["--no-config", "-c", "source $argv[1]; and complete --do-complete=$argv[2]", script, line],
                                      directory: scratch)
        #expect(result.code == 0, "\(line): \(result.err)")
        #expect(result.err.isEmpty, "\(line): \(result.err)")
        // Each line is `candidate<TAB>description`.
        return result.out.split(separator: "\n").map { String($0.split(separator: "\t", maxSplits: 1)[0]) }
    }

    @Test(.enabled(if: ShellRun.exists("/usr/bin/fish"))) func fishLoadsTheScriptAndCompletes() throws {
        let script = try write(FishCompletion.script(), "hwprobe.fish")
        let check = try ShellRun.run("/usr/bin/fish", ["--no-config", "--no-execute", script])
        #expect(check.code == 0 && check.err.isEmpty, "\(check.err)")

        #expect(try Set(fishComplete("hwprobe ")) == Set(Commands.all.map(\.name)))
        #expect(try fishComplete("hwprobe sc") == ["scan"])
        #expect(try fishComplete("hwprobe -v li") == ["list"])
        #expect(try fishComplete("hwprobe --btsnoop /tmp/x sc") == ["scan"])
        #expect(try Set(fishComplete("hwprobe scan --h")) == ["--help", "--hci", "--height-cm", "--haptics"])
        #expect(try fishComplete("hwprobe --js") == ["--json"])
        #expect(try fishComplete("hwprobe haptics --cue s") == ["selection", "success"])
        #expect(try Set(fishComplete("hwprobe scan --hci ")) == ["hci:", "uart:", "tcp:", "sim:", "replay:"])
        #expect(try fishComplete("hwprobe import --camera file:videos/b") == ["file:videos/backup.y4m"])
        #expect(try fishComplete("hwprobe import --out pass") == ["password.txt"])
        #expect(try Set(fishComplete("hwprobe completions ")) == ["bash", "zsh", "fish"])
    }

    // MARK: zsh

    /// Types `line` and Tab into an interactive `zsh -f` on a pseudo-terminal (zsh's own zpty
    /// module), with the script in `fpath` and `compinit` run, then Enter; `hwprobe` is a function
    /// there that prints its arguments, so the result is the line as completion left it.
    func zshComplete(_ line: String) throws -> String {
        let directory = scratch.appending(path: "zfunc")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ZshCompletion.script().write(to: directory.appending(path: "_hwprobe"), atomically: true, encoding: .utf8)
        let driver = try write(#"""
        zmodload zsh/zpty || exit 9
        zpty z zsh -f -i
        zpty -w z "unsetopt beep; cd ${(q)3}; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D; hwprobe() { print -r -- \"R\"\"AN<\$*>\" }; print RE\"\"ADY"
        local out
        zpty -r -m z out '*READY*' || exit 7
        zpty -w -n z "$2"$'\t'
        sleep 1
        zpty -w -n z $'\r'
        zpty -r -m z out '*RAN<*>*' || exit 6
        zpty -d z
        print -r -- ${${out##*RAN<}%%>*}
        """#, "drive.zsh")
        let result = try ShellRun.run("/usr/bin/timeout", ["30", "/usr/bin/zsh", "-f", driver, directory.path, line, scratch.path])
        #expect(result.code == 0, "\(line): exit \(result.code) \(result.err)")
        return "hwprobe " + result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: ShellRun.exists("/usr/bin/zsh"))) func zshLoadsTheScriptAndCompletes() throws {
        let script = try write(ZshCompletion.script(), "_hwprobe")
        let check = try ShellRun.run("/usr/bin/zsh", ["-n", script])
        #expect(check.code == 0 && check.err.isEmpty, "\(check.err)")

        // Each line, typed and completed with one Tab, becomes the one after it.
        let cases: [(String, String)] = [
            ("hwprobe sc", "hwprobe scan"),
            ("hwprobe -v li", "hwprobe -v list"),
            ("hwprobe --btsnoop /tmp/x sc", "hwprobe --btsnoop /tmp/x scan"),
            ("hwprobe --js", "hwprobe --json"),
            ("hwprobe scan --yes --ha", "hwprobe scan --yes --haptics"),
            ("hwprobe haptics --cue suc", "hwprobe haptics --cue success"),
            ("hwprobe --no-color scan --hci ua", "hwprobe --no-color scan --hci uart:"),
            ("hwprobe scan --hci=s", "hwprobe scan --hci=sim:"),
            ("hwprobe import --camera file:videos/b", "hwprobe import --camera file:videos/backup.y4m"),
            ("hwprobe import --password-file pass", "hwprobe import --password-file password.txt"),
            ("hwprobe completions f", "hwprobe completions fish"),
        ]
        for (typed, completed) in cases {
            #expect(try zshComplete(typed) == completed, "\(typed)")
        }
    }
}
