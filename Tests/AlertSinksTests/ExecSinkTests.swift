import AlertModel
import AlertSinks
import AlertTestSupport
import Foundation
import Platform
import Testing

/// The exec sink running real `/bin/sh` scripts written to a temporary folder.
@Suite("exec sink")
struct ExecSinkTests {
    init() { ProcessSetUp.atStart() }

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
        let path = try script(
            """
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
        let expected = [
            "ID": "btc-100k:BTC:1700000000000", "RULE": "btc-100k", "SYMBOL": "BTC",
            "TIME": "2023-11-14T22:13:20.000Z", "PRICE": "100012.5", "VALUE": "100012.5",
            "THRESHOLD": "100000", "CONDITION": "price crossesAbove 100000", "MESSAGE": alert.message
        ]
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
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder], timeout: 300)).send(
            sampleAlert())
        // Had the script run its 30 s to the end, the send would be `.delivered`; the pid check
        // below shows the process is gone.
        #expect(result == .retry(reason: "timed out after 300 ms (process group killed)", after: nil))
        let pid = try #require(Int32(try read(folder + "/pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    @Test func missingProgramIsPermanent() async throws {
        let absolute = try await ExecSink(name: "hook", spec: ExecSpec(command: ["/nonexistent/notify"])).send(
            sampleAlert())
        #expect(absolute == .permanent(reason: "cannot run /nonexistent/notify: No such file or directory"))
        let onPath = try await ExecSink(name: "hook", spec: ExecSpec(command: ["no-such-program-pricealert"])).send(
            sampleAlert())
        guard case .permanent = onPath else { Issue.record("expected permanent, got \(onPath)"); return }
    }

    @Test func argumentsAreNeverInterpretedByAShell() async throws {
        let folder = try temporaryFolder()
        let path = try script("printf '%s' \"$2\" > \"$1/arg\"\n", in: folder)
        let tricky = "$(touch \(folder)/pwned); `id`"
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder, tricky])).send(
            sampleAlert())
        #expect(result == .delivered)
        #expect(try read(folder + "/arg") == tricky)
        #expect(!FileManager.default.fileExists(atPath: folder + "/pwned"))
    }

    @Test func aLargeEventReachesTheProgramWhole() async throws {
        let folder = try temporaryFolder()
        let path = try script(
            """
            cat > "$1/stdin.json"
            printf '%s' "$PRICEALERT_MESSAGE" > "$1/MESSAGE"
            """, in: folder)
        var alert = sampleAlert()
        alert.message = String(repeating: "é", count: 300_000) + String(repeating: "x", count: 400_000)
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder])).send(alert)
        #expect(result == .delivered)
        let received = try Data(contentsOf: URL(fileURLWithPath: folder + "/stdin.json"))
        #expect(received.count > 1_000_000)
        #expect(received == Data((AlertFormat.json(alert) + "\n").utf8))
        // The variable is cut (Linux refuses longer environment strings), at a character.
        #expect(try read(folder + "/MESSAGE") == String(repeating: "é", count: ExecSink.variableLimit / 2))
    }

    /// A program that does not read its input is judged by its exit status, and is not waited
    /// for past its end.
    @Test func aProgramThatIgnoresALargeInputEndsTheDelivery() async throws {
        let folder = try temporaryFolder()
        let delivered = try script("exit 0\n", in: folder, name: "ok.sh")
        let failed = try script("exit 3\n", in: folder, name: "fail.sh")
        var alert = sampleAlert()
        alert.message = String(repeating: "x", count: 1_000_000)
        #expect(try await ExecSink(name: "hook", spec: ExecSpec(command: [delivered])).send(alert) == .delivered)
        #expect(
            try await ExecSink(name: "hook", spec: ExecSpec(command: [failed])).send(alert)
                == .retry(reason: "exit 3", after: nil))
    }

    @Test func whatTheProgramLeavesRunningIsKilledWhenItEnds() async throws {
        let folder = try temporaryFolder()
        let path = try script("sleep 1000 &\necho $! > \"$1/pid\"\n", in: folder)
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder])).send(sampleAlert())
        #expect(result == .delivered)
        let pid = try #require(Int32(try read(folder + "/pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try await ChildProcesses.waitUntilGone(pid), "the background sleep outlived the delivery")
    }

    /// (Variables the process already has: setting one here would race with other tests' spawns.)
    @Test func theWithheldVariablesAreNotInherited() async throws {
        let folder = try temporaryFolder()
        let environment = ProcessInfo.processInfo.environment
        let withheld = try #require(environment["HOME"])
        let kept = try #require(environment["PATH"])
        let path = try script("env > \"$1/env\"\n", in: folder)
        let spec = ExecSpec(command: [path, folder], withheldVariables: ["HOME"])
        #expect(try await ExecSink(name: "hook", spec: spec).send(sampleAlert()) == .delivered)
        let lines = try read(folder + "/env").split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("HOME=") }, "withheld: HOME=\(withheld)")
        #expect(lines.contains { $0 == "PATH=" + kept })
        #expect(lines.contains("PRICEALERT_RULE=btc-100k"))
    }

    /// Making an exec sink changes nothing process-wide: SIGPIPE keeps the disposition the
    /// program gave it (here a handler of the test's; `ProcessSetUp.atStart` sets it once).
    /// The handler returns, so a write to a closed pipe elsewhere still fails with EPIPE.
    @Test func makingASinkLeavesTheProcessAlone() throws {
        var own = sigaction()
        own.__sigaction_handler.sa_handler = { _ in }
        var previous = sigaction()
        sigaction(SIGPIPE, &own, &previous)
        defer { sigaction(SIGPIPE, &previous, nil) }
        _ = try ExecSink(name: "hook", spec: ExecSpec(command: ["/bin/true"]))
        var after = sigaction()
        sigaction(SIGPIPE, nil, &after)
        let handler = unsafeBitCast(after.__sigaction_handler.sa_handler, to: Int.self)
        #expect(handler == unsafeBitCast(own.__sigaction_handler.sa_handler, to: Int.self))
    }

    /// A timeout as long as 64 bits allow (an outbox row of an old rule file) does not overflow.
    @Test func theLongestTimeoutDoesNotOverflow() async throws {
        let folder = try temporaryFolder()
        let path = try script("exit 0\n", in: folder)
        #expect(
            try await ExecSink(name: "hook", spec: ExecSpec(command: [path], timeout: .max)).send(sampleAlert())
                == .delivered)
    }
}

/// Control characters in an alert's texts (a symbol from a feed, a rule's strings) reach the
/// program's environment escaped: a NUL cannot cut a variable short, a CR or LF cannot forge
/// a line. Standard input carries the exact text.
@Suite struct ExecSinkControlCharacterTests {
    init() { ProcessSetUp.atStart() }

    @Test func variablesHoldNoControlCharacter() async throws {
        let folder = try temporaryFolder()
        let sink = ExecSinkTests()
        let path = try sink.script(
            """
            cat > "$1/stdin.json"
            printf '%s' "$PRICEALERT_SYMBOL" > "$1/SYMBOL"
            printf '%s' "$PRICEALERT_ID" > "$1/ID"
            printf '%s' "$PRICEALERT_MESSAGE" > "$1/MESSAGE"
            """, in: folder)
        var alert = sampleAlert()
        alert.symbol = "BTC\u{0}\r\nX\u{85}"
        alert.message = "BTC\u{0}up\nline two\u{1B}[31m"
        let result = try await ExecSink(name: "hook", spec: ExecSpec(command: [path, folder])).send(alert)
        #expect(result == .delivered)
        #expect(try sink.read(folder + "/SYMBOL") == #"BTC\u0000\r\nX\u0085"#)
        #expect(try sink.read(folder + "/ID") == #"btc-100k:BTC\u0000\r\nX\u0085:1700000000000"#)
        #expect(try sink.read(folder + "/MESSAGE") == "BTC\\u0000up\nline two\\u001b[31m")
        #expect(try sink.read(folder + "/stdin.json") == AlertFormat.json(alert) + "\n")
    }
}
