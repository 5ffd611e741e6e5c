import AlertCore
import AlertSinks
import Foundation
import Testing

/// The exec sink running real `/bin/sh` scripts written to a temporary folder.
@Suite("exec sink")
struct ExecSinkTests {
    /// Writes an executable script and returns its path.
    func script(_ body: String, in folder: String, name: String = "notify.sh") throws -> String {
        let path = folder + "/" + name
        try writeExecutable(path, "#!/bin/sh\n" + body)
        return path
    }

    func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func passesTheEventOnStdinAndTheVariablesInTheEnvironment() async throws {
        let folder = try temporaryFolder()
        let path = try script("""
            cat > "$1/stdin.json"
            for v in ID RULE SYMBOL TIME PRICE VALUE THRESHOLD CONDITION MESSAGE; do
              eval "printf '%s' \\"\\$PRICEALERT_$v\\"" > "$1/$v"
            done
            printf '%s' "$HOME" > "$1/HOME"
            """, in: folder)
        let alert = sampleAlert()
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder])).send(alert)
        #expect(result == .delivered)
        #expect(try read(folder + "/stdin.json") == AlertFormat.json(alert) + "\n")
        let expected = ["ID": "btc-100k:BTC:1700000000000", "RULE": "btc-100k", "SYMBOL": "BTC",
                        "TIME": "2023-11-14T22:13:20.000Z", "PRICE": "100012.5", "VALUE": "100012.5",
                        "THRESHOLD": "100000", "CONDITION": "price crossesAbove 100000", "MESSAGE": alert.message]
        for (name, value) in expected {
            #expect(try read(folder + "/" + name) == value, "PRICEALERT_\(name)")
        }
        #expect(try read(folder + "/HOME") == (ProcessInfo.processInfo.environment["HOME"] ?? ""))
    }

    @Test func otherExitIsRetriedWithTheFirstLineOfStderr() async throws {
        let folder = try temporaryFolder()
        let path = try script("echo 'mail server down' >&2\necho 'second line' >&2\nexit 3\n", in: folder)
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path])).send(sampleAlert())
        #expect(result == .retry(reason: "exit 3: mail server down", after: nil))
    }

    @Test func exit127IsPermanent() async throws {
        let folder = try temporaryFolder()
        let path = try script("echo 'mailx: not found' >&2\nexit 127\n", in: folder)
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path])).send(sampleAlert())
        #expect(result == .permanent(reason: "exit 127: mailx: not found"))
    }

    @Test func timeoutKillsTheProcessGroupAndIsRetried() async throws {
        let folder = try temporaryFolder()
        let path = try script("echo $$ > \"$1/pid\"\nsleep 30\n", in: folder)
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder], timeout: 300)).send(sampleAlert())
        let elapsed = clock.now - start
        #expect(result == .retry(reason: "timed out after 300 ms (process group killed)", after: nil))
        // About 0.3 s alone. With the whole suite in parallel, resuming this task can wait
        // seconds for a cooperative thread, so the bound only shows the script's 30 s sleep was
        // cut short; the pid check below shows the process is gone.
        #expect(elapsed < .seconds(25))
        let pid = try #require(Int32(try read(folder + "/pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    @Test func missingProgramIsPermanent() async throws {
        let absolute = try await ExecSink(name: "hook", spec: ExecSpec(command: ["/nonexistent/notify"])).send(sampleAlert())
        #expect(absolute == .permanent(reason: "cannot run /nonexistent/notify: No such file or directory"))
        let onPath = try await ExecSink(name: "hook", spec: ExecSpec(command: ["no-such-program-pricealert"])).send(sampleAlert())
        guard case .permanent = onPath else { Issue.record("expected permanent, got \(onPath)"); return }
    }

    @Test func argumentsAreNeverInterpretedByAShell() async throws {
        let folder = try temporaryFolder()
        let path = try script("printf '%s' \"$2\" > \"$1/arg\"\n", in: folder)
        let tricky = "$(touch \(folder)/pwned); `id`"
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder, tricky])).send(sampleAlert())
        #expect(result == .delivered)
        #expect(try read(folder + "/arg") == tricky)
        #expect(!FileManager.default.fileExists(atPath: folder + "/pwned"))
    }
}
