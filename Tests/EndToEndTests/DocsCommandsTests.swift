import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// Every `pricealert` command shown in README.md and Docs/*.md runs as shown, with the built
/// binary, in a fresh folder holding the repository's `Rules/` and `Samples/`, with a fresh
/// state folder. A command is, in a fenced `sh`, `console` or plain block, a line starting with
/// `pricealert`, `$ pricealert` or `swift run pricealert` (also after `&&`); outside blocks, an
/// inline code span `pricealert COMMAND ARGUMENT...`. Usage synopses (`[--opt]`, `FILE...`) and
/// bare command names are not commands. A new doc command is tested without touching this file.
///
/// `--source btse` gets `--endpoint` of an embedded exchange on a free port, `--port N` becomes
/// `--port 0`, and webhook sinks' URL variables point at a local receiver. Commands that run
/// until stopped (`run`, `exchange`, `record`, `demo` without a `--duration` of at most a minute)
/// are stopped with SIGTERM once they show they work, and must then exit 0 like the others.
@Suite("end to end: the commands of the docs", .programs)
struct DocsCommandsTests {
    struct DocCommand: Sendable, CustomStringConvertible {
        var place: String
        /// As written, without a prompt, `swift run ` or a trailing `# comment`.
        var text: String
        var description: String { "\(place): \(text)" }
    }

    /// Commands that cannot run in a test, each with why.
    static let skipped: [String: String] = [
        // Runs for its whole minute; DemoMinuteTests runs exactly this and checks every rule fires.
        "pricealert demo --duration 60s": "DemoMinuteTests",
        // deploy.md's installed rule files, outside the repository.
        "pricealert validate /etc/pricealert/*.json": "system folder"
    ]

    static let repo = PriceAlertBinary.repo

    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: repo.appendingPathComponent("Docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "Docs/" + $0 }
        return ["README.md"] + docs
    }

    /// The commands of one markdown text, in order.
    static func commands(in markdown: String, file: String) -> [DocCommand] {
        var found: [DocCommand] = []
        var fence: String?
        for (index, raw) in markdown.components(separatedBy: "\n").enumerated() {
            let place = "\(file):\(index + 1)"
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("```") {
                fence = fence == nil ? String(line.dropFirst(3)) : nil
                continue
            }
            if let language = fence {
                guard ["sh", "console", ""].contains(language) else { continue }
                var text = line.hasPrefix("$ ") ? String(line.dropFirst(2)) : line
                if let comment = text.range(of: " # ") { text = String(text[..<comment.lowerBound]) }
                for part in text.components(separatedBy: "&&") {
                    if let command = command(part) { found.append(DocCommand(place: place, text: command)) }
                }
                continue
            }
            // Inline code spans: the text between pairs of backticks.
            let spans = line.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            for span in spans {
                guard let command = command(span), command.split(separator: " ").count > 1 + commandWords(command)
                else { continue }
                found.append(DocCommand(place: place, text: command))
            }
        }
        return found
    }

    static let commandNames: Set<String> = [
        "validate", "replay", "check", "run", "demo", "markets", "record",
        "exchange", "sinks", "outbox", "--version", "--help"
    ]

    /// `text` as a command (`pricealert …`), or nil for anything else: another program, a
    /// synopsis, a word that is no command.
    static func command(_ text: String) -> String? {
        var words = text.split(separator: " ").map(String.init)
        if words.starts(with: ["swift", "run"]) { words.removeFirst(2) }
        guard words.first == "pricealert", words.count > 1, commandNames.contains(words[1]) else { return nil }
        let synopsis = words.contains {
            $0.hasPrefix("[") || $0.hasSuffix("...") || $0.hasSuffix("…") || $0.contains("|")
        }
        return synopsis ? nil : words.joined(separator: " ")
    }

    /// How many words after `pricealert` name the command (`sinks test`: 2).
    static func commandWords(_ command: String) -> Int {
        let words = command.split(separator: " ")
        return ["sinks", "outbox"].contains(words.dropFirst().first ?? "") ? 2 : 1
    }

    static let all: [DocCommand] = {
        (try? documents())?.flatMap { file in
            let text = (try? String(contentsOf: repo.appendingPathComponent(file), encoding: .utf8)) ?? ""
            return commands(in: text, file: file)
        } ?? []
    }()

    @Test func theExtractionReadsBlocksAndSpansAndLeavesSynopsesAlone() {
        let markdown = """
            Run `pricealert replay --rules R.json --ticks t.jsonl` or see `pricealert check`.
            ```sh
            scripts/bootstrap && swift run pricealert demo --duration 5s
            pricealert validate Rules/*.json       # a comment
            swift test
            ```
            ```
            pricealert replay --rules R [--rules R2 ...] --ticks T.jsonl
            $ pricealert sinks test ops --rules Rules/sinks.json
            sink 'ops' (webhook): delivered in 12.3 ms
            ```
            ```json
            {"note": "pricealert validate x.json"}
            ```
            The message `pricealert test alert`, the synopsis `pricealert validate FILE...`, `pricealert outbox flush`.
            """
        #expect(
            Self.commands(in: markdown, file: "x.md").map(\.description) == [
                "x.md:1: pricealert replay --rules R.json --ticks t.jsonl",
                "x.md:3: pricealert demo --duration 5s",
                "x.md:4: pricealert validate Rules/*.json",
                "x.md:9: pricealert sinks test ops --rules Rules/sinks.json"
            ])
    }

    @Test func theDocsShowCommandsAndTheSkipListIsCurrent() {
        #expect(Self.all.count >= 12)
        let texts = Set(Self.all.map(\.text))
        for command in Self.skipped.keys {
            #expect(texts.contains(command), "skip list: '\(command)' is in no doc any more")
        }
        for first in ["pricealert --version", "pricealert demo --duration 60s"] { #expect(texts.contains(first)) }
    }

    /// One command at a time, against one exchange process (`pricealert exchange --port 0`):
    /// nothing here waits on a server inside the test process while a binary waits on it.
    @Test func everyDocCommandRunsAsShown() async throws {
        let exchange = try PriceAlertBinary.start(["exchange", "--port", "0"])
        let listening = try await exchange.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 60)
        let address = try #require(listening.range(of: "http://127.0.0.1:"))
        let port = try #require(Int(listening[address.upperBound...].prefix { $0.isNumber }))
        let router = Router()
        router.post("/hook") { _, _ in HTTPResponse.Status.ok }
        let commands = Self.all.filter { Self.skipped[$0.text] == nil }
        try await LoopbackServer.with(router) { hookPort in
            for command in commands {
                let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "pricealert-docs-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: dir) }
                for folder in ["Rules", "Samples"] {
                    try FileManager.default.createSymbolicLink(
                        at: dir.appendingPathComponent(folder),
                        withDestinationURL: Self.repo.appendingPathComponent(folder))
                }
                try await Self.run(command, in: dir, exchangePort: port, hookPort: hookPort)
            }
        }
        #expect(try await exchange.stop(signal: SIGTERM) == 0)
    }

    /// The command's arguments with the local stand-ins (nil: it cannot run here; an issue says why).
    static func arguments(_ command: DocCommand, in dir: URL, exchangePort: Int) throws -> [String]? {
        guard !command.text.contains(where: { "'\"\\$<>|;".contains($0) }) else {
            Issue.record(
                "\(command): quoting, variables and redirections are not read here; show the command plainly or add it to the skip list"
            )
            return nil
        }
        var words = Array(command.text.split(separator: " ").map(String.init).dropFirst())
        var result: [String] = []
        while !words.isEmpty {
            let word = words.removeFirst()
            if word == "--port", !words.isEmpty {
                words.removeFirst()
                result += ["--port", "0"]
            } else if word == "--source", let source = words.first {
                words.removeFirst()
                guard source == "btse" else {
                    Issue.record("\(command): no local stand-in for source '\(source)'; add it to the skip list")
                    return nil
                }
                result += ["--source", source, "--endpoint", "http://127.0.0.1:\(exchangePort)"]
            } else if word.contains("*") {
                result += try glob(word, in: dir)
            } else {
                result.append(word)
            }
        }
        return result
    }

    /// `FOLDER/PREFIX*SUFFIX` (one `*`, in the last component) as the shell expands it, sorted.
    static func glob(_ pattern: String, in dir: URL) throws -> [String] {
        let slash = pattern.lastIndex(of: "/")
        let folder = slash.map { String(pattern[..<$0]) } ?? "."
        let name = slash.map { String(pattern[pattern.index(after: $0)...]) } ?? pattern
        let parts = name.split(separator: "*", omittingEmptySubsequences: false)
        try #require(parts.count == 2, "\(pattern): one * only")
        let matches = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent(folder).path)
            .filter { $0.hasPrefix(parts[0]) && $0.hasSuffix(parts[1]) && !$0.hasPrefix(".") }.sorted()
        try #require(!matches.isEmpty, "\(pattern) matches nothing")
        return matches.map { slash == nil ? $0 : folder + "/" + $0 }
    }

    static func run(_ command: DocCommand, in dir: URL, exchangePort: Int, hookPort: Int) async throws {
        guard let arguments = try arguments(command, in: dir, exchangePort: exchangePort) else { return }
        let hook = "http://127.0.0.1:\(hookPort)/hook"
        let environment = ["OPS_HOOK_URL": hook, "OPS_HOOK_SECRET": "docs-test-secret", "SLACK_WEBHOOK_URL": hook]
        let name = arguments.first ?? ""
        let duration = arguments.firstIndex(of: "--duration").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
        let stopsByItself = duration.map { ["1s", "5s", "10s", "30s", "60s", "1m"].contains($0) } ?? true
        guard ["run", "exchange", "record", "demo"].contains(name), !(stopsByItself && duration != nil) else {
            let result = try await PriceAlertBinary.run(arguments, in: dir, environment: environment, timeout: 120)
            #expect(result.status == 0, "\(command)\nstdout: \(result.stdout)\nstderr: \(result.stderr)")
            return
        }
        // Runs until stopped: wait for the sign that it works, then stop it as systemd or Ctrl-C would.
        let running = try PriceAlertBinary.start(arguments, in: dir, environment: environment)
        switch name {
        case "exchange":
            _ = try await running.waitForStderrLine(containing: "exchange: listening on http://127.0.0.1:", timeout: 60)
        case "record":
            let out = try #require(
                arguments.firstIndex(of: "--out").map { dir.appendingPathComponent(arguments[$0 + 1]).path })
            try await waitUntil(timeout: 60, command) {
                ((try? Data(contentsOf: URL(fileURLWithPath: out)))?.count ?? 0) > 0
            }
        case "demo": _ = try await running.waitForStdoutLine(containing: "[", timeout: 60)
        default: _ = try await running.waitForStderrLine(containing: " markets, ", timeout: 60)
        }
        let status = try await running.stop(signal: SIGTERM)
        #expect(status == 0, "\(command)\nstdout: \(running.stdout)\nstderr: \(running.stderr)")
    }

    static func waitUntil(timeout: TimeInterval, _ command: DocCommand, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else {
                throw PriceAlertBinary.TimedOut(waitingFor: "a non-empty output file", command: command.text)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
