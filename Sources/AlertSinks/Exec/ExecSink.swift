import AlertModel
import AlertPolicy
import AlertRules
import Platform

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The plug-in sink: runs a program for each alert, so any notifier can be added without
/// recompiling pricealert.
///
/// `command` is an argv array run with `posix_spawnp` (PATH lookup, never a shell). The program
/// gets the alert event's JSON (Docs/rules.md) and a newline on stdin (all of it, however long), and
/// `PRICEALERT_ID`, `_RULE`, `_SYMBOL`, `_TIME`, `_PRICE`, `_VALUE`, `_THRESHOLD`, `_CONDITION`,
/// `_MESSAGE` (each cut to `variableLimit` bytes) on top of pricealert's own environment, less
/// the variables holding secrets: webhook URLs and signing keys (`ExecSpec.withheldVariables`)
/// and source API keys (`APIKeyVariables`). It inherits no descriptor but 0, 1 and 2. Its
/// standard output is discarded; the first line of its standard error becomes the failure
/// reason. Nothing it starts in its process group outlives it (see `ChildProcess`).
///
/// - exit 0: delivered.
/// - exit 126 or 127 (the shells' "not executable" / "not found"), or a program that cannot be
///   spawned (missing, not executable): permanent — retrying will not make it exist. Spawn
///   failures that can pass (ETXTBSY, EAGAIN, ENOMEM, EMFILE, ENFILE) are retried.
/// - any other exit, death by a signal, or running past `timeout` (the whole process group
///   gets SIGTERM, then SIGKILL 500 ms later): retry.
public struct ExecSink: Sink {
    public let name: String
    public let command: [String]
    /// Milliseconds.
    public let timeout: Int64
    /// What systemd gives pricealert itself: its notify socket, watchdog and passed sockets. A
    /// notifier that inherited them could report readiness or keep the watchdog alive for us.
    static let serviceManagerVariables: Set<String> = [
        "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
        "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"
    ]
    /// The spec's `withheldVariables`, every `APIKeyVariables` name and the service manager's.
    public let withheldVariables: Set<String>

    /// The longest value of a `PRICEALERT_*` variable, in bytes: Linux refuses to start a
    /// program with one environment string over 128 KiB. Standard input always has everything.
    public static let variableLimit = 32 * 1024

    public init(name: String, spec: ExecSpec) throws(SinkError) {
        guard !spec.command.isEmpty, !spec.command[0].isEmpty else {
            throw SinkError(sink: name, description: "exec sink '\(name)': command is empty")
        }
        self.name = name
        self.command = spec.command
        self.timeout = spec.timeout
        withheldVariables = Set(spec.withheldVariables).union(APIKeyVariables.all).union(Self.serviceManagerVariables)
    }

    /// The `PRICEALERT_*` variables for `alert` (`PRICEALERT_SOURCE` only for an event of a tick
    /// with a source, rules v3 §6). The texts (id, rule, symbol, condition,
    /// message) hold no control character: each is escaped as `UserText.escapeControls` does
    /// (`\n`, `\u0000`), so a NUL cannot cut a value short nor a newline forge a line in what
    /// the program prints. Only the message keeps its newlines and tabs, which its rule's author
    /// wrote. Standard input has the exact text.
    public static func variables(for alert: Alert) -> [(name: String, value: String)] {
        let text = { (value: String) in UserText.escapingControls(value) }
        return [
            ("PRICEALERT_ID", text(alert.id)), ("PRICEALERT_RULE", text(alert.rule)),
            ("PRICEALERT_SYMBOL", text(alert.symbol)),
            ("PRICEALERT_TIME", Timestamp.format(alert.time)), ("PRICEALERT_PRICE", JSONNumber.format(alert.price)),
            ("PRICEALERT_VALUE", JSONNumber.format(alert.value)),
            ("PRICEALERT_THRESHOLD", AlertFormat.thresholdJSON(alert.threshold)),
            ("PRICEALERT_CONDITION", text(alert.condition)),
            ("PRICEALERT_MESSAGE", UserText.escapingControls(alert.message, keepingLines: true))
        ] + (alert.source.map { [("PRICEALERT_SOURCE", text($0))] } ?? [])
    }

    public func send(_ alert: Alert) async -> SinkResult {
        await run(environment: environment(for: alert), stdin: AlertFormat.json(alert))
    }

    /// Runs the program once for a digest: the digest's JSON (`DigestFormat.json`) and a newline
    /// on stdin; `PRICEALERT_ID` is the digest's id, `PRICEALERT_COUNT` its number of events,
    /// and the other `PRICEALERT_*` variables describe its first event.
    public func send(_ digest: AlertModel.Digest) async -> SinkResult {
        var environment = environment(for: digest.events[0]).filter { !$0.hasPrefix("PRICEALERT_ID=") }
        environment += [
            "PRICEALERT_ID=\(UserText.escapingControls(digest.id))", "PRICEALERT_COUNT=\(digest.events.count)"
        ]
        return await run(environment: environment, stdin: DigestFormat.json(digest))
    }

    public func send(_ delivery: Delivery) async -> SinkResult {
        switch delivery {
        case .event(let alert): return await send(alert)
        case .digest(let digest): return await send(digest)
        }
    }

    private func run(environment: [String], stdin: String) async -> SinkResult {
        let outcome = await ChildProcess.run(
            command, environment: environment,
            stdin: Array((stdin + "\n").utf8), timeout: timeout)
        let detail = Self.firstLine(outcome.stderr)
        switch outcome.ending {
        case .exited(0):
            return .delivered
        case .exited(let code) where code == 126 || code == 127:
            return .permanent(
                reason: "exit \(code): \(detail ?? (code == 127 ? "command not found" : "command not executable"))")
        case .exited(let code):
            return .retry(reason: "exit \(code)" + (detail.map { ": \($0)" } ?? ""), after: nil)
        case .signaled(let signal):
            return .retry(reason: "killed by signal \(signal)" + (detail.map { ": \($0)" } ?? ""), after: nil)
        case .timedOut:
            return .retry(reason: "timed out after \(timeout) ms (process group killed)", after: nil)
        case .spawnFailed(let code)
        where code == ETXTBSY || code == EAGAIN || code == ENOMEM || code == EMFILE || code == ENFILE:
            // The program is being written (replaced by a package upgrade) or the system is
            // short of processes/memory/descriptors: may work later.
            return .retry(reason: "cannot run \(command[0]): \(OSError(code: code))", after: nil)
        case .spawnFailed(let code):
            return .permanent(reason: "cannot run \(command[0]): \(OSError(code: code))")
        case .exiting:
            return .retry(reason: "not started: pricealert is exiting", after: nil)
        }
    }

    /// The inherited environment less the withheld variables, with the alert's variables set
    /// (replacing any of the same name).
    func environment(for alert: Alert) -> [String] {
        var result: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            let name = text.prefix { $0 != "=" }
            if !name.hasPrefix("PRICEALERT_"), !withheldVariables.contains(String(name)) { result.append(text) }
            entry += 1
        }
        return result + Self.variables(for: alert).map { "\($0.name)=\(Self.cut($0.value))" }
    }

    /// `value`, or its first `variableLimit` bytes ending at a character boundary.
    static func cut(_ value: String) -> String {
        guard value.utf8.count > variableLimit else { return value }
        let bytes = Array(value.utf8.prefix(variableLimit + 1))
        var end = variableLimit
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 } // a UTF-8 continuation byte
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// The first non-empty line of `stderr`, at most 200 characters.
    static func firstLine(_ stderr: [UInt8]) -> String? {
        let text = String(decoding: stderr, as: UTF8.self)
        guard
            let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).first(where: {
                !$0.allSatisfy { $0 == " " }
            })
        else {
            return nil
        }
        return String(line.prefix(200))
    }
}

extension ExecSink {
    /// The `exec` kind, for `SinkRegistry.all`.
    public static let sinkType = SinkType(
        ExecSpec.self, keys: ["command", "timeout"],
        read: { checker in
            let timeout = checker.duration("timeout", atMost: "1h")
            let command = checker.strings(
                "command", required: true, contents: "strings (program and arguments)",
                emptyMessage: "exec command must not be empty", each: "each argument in 'command'")
            guard let command else { return nil }
            var spec = ExecSpec(command: command)
            spec.timeout = timeout ?? spec.timeout
            return spec
        },
        make: { name, spec, _ in try ExecSink(name: name, spec: spec) })
}
