import AlertTestSupport
import ArgumentParser
import Foundation
import Testing

@testable import pricealert

/// What every command's command line promises, through the built binary: `--version`, help
/// texts that read as paragraphs, `--rules` in both forms, and standard output that is exactly
/// the listing when a command lists alerts.
@Suite("end to end: the command line", .programs)
struct CommandLineTests {
    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // Two files: `b.json` defines a stdout sink and a rule that notifies it and the built-in one.
        try #"{"version": 1, "rules": [{"id": "a-btc", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#
            .write(to: dir.appendingPathComponent("a.json"), atomically: true, encoding: .utf8)
        try #"""
        {"version": 1, "sinks": {"console": {"type": "stdout", "format": "json"}},
         "rules": [{"id": "b-btc", "symbol": "BTC", "when": {"price": {"above": 2}}, "notify": ["console", "stdout"]}]}
        """#.write(to: dir.appendingPathComponent("b.json"), atomically: true, encoding: .utf8)
        try #"{"time": 1700000000000, "symbol": "BTC", "price": 43000.5}"#
            .write(to: dir.appendingPathComponent("t.jsonl"), atomically: true, encoding: .utf8)
        return dir
    }

    /// The rule ids of JSON alert lines, in order; fails on a line that is not one.
    func rules(inJSONLines text: String) throws -> [String] {
        try text.split(separator: "\n").map { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            return try #require(object["rule"] as? String, "\(line)")
        }
    }

    @Test func versionIsTheOneDefinedInTheSources() async throws {
        let result = try await PriceAlertBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == Version.current + "\n")
        #expect(Version.current.split(separator: ".").count == 3)
    }

    /// Every command and subcommand, with the words that name it (`["outbox", "flush"]`).
    static func commands(
        _ type: any ParsableCommand.Type = PriceAlert.self, path: [String] = []
    ) -> [([String], any ParsableCommand.Type)] {
        type.configuration.subcommands.flatMap { sub -> [([String], any ParsableCommand.Type)] in
            let name = sub.configuration.commandName ?? sub._commandName
            return [(path + [name], sub)] + commands(sub, path: path + [name])
        }
    }

    /// ArgumentParser re-wraps each line of a discussion on its own, so a line break inside a
    /// paragraph prints as a ragged short line: paragraphs are one line each, apart by a blank one.
    @Test func everyHelpTextIsWrittenInParagraphs() async throws {
        let commands = Self.commands()
        #expect(commands.count >= 13)
        for (words, type) in [([], PriceAlert.self as any ParsableCommand.Type)] + commands {
            let discussion = type.configuration.discussion
            for paragraph in discussion.components(separatedBy: "\n\n") {
                #expect(
                    !paragraph.contains("\n"),
                    "pricealert \(words.joined(separator: " ")): a line break inside \(paragraph)")
            }
            let help = try await PriceAlertBinary.run(words + ["--help"])
            #expect(help.status == 0, "\(words): \(help.stderr)")
            // Each paragraph is printed whole: the same words, re-wrapped.
            let printed = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for paragraph in discussion.components(separatedBy: "\n\n") where !paragraph.isEmpty {
                let words = paragraph.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                #expect(printed.contains(words), "\(words)")
            }
        }
    }

    /// `--rules A B`, `--rules A --rules B` and `--rules=A B` load both files in every command
    /// that takes rules.
    @Test(arguments: [
        ["--rules", "a.json", "b.json"], ["--rules", "a.json", "--rules", "b.json"], ["--rules=a.json", "b.json"]
    ])
    func severalRuleFilesInEitherForm(rules: [String]) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let checks = [
            ["check"] + rules + ["--ticks", "t.jsonl", "--format", "json", "--state", "st"],
            ["replay"] + rules + ["--ticks", "t.jsonl", "--format", "json"]
        ]
        for arguments in checks {
            let result = try await PriceAlertBinary.run(arguments, in: dir)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(try self.rules(inJSONLines: result.stdout) == ["a-btc", "b-btc"], "\(arguments)")
        }
        let sink = try await PriceAlertBinary.run(["sinks", "test", "console"] + rules, in: dir)
        #expect(sink.status == 0, "\(sink.stderr)")
        let sinkLines = sink.stdout.split(separator: "\n").map(String.init)
        #expect(sinkLines.count == 2, "\(sink.stdout)")
        #expect(try self.rules(inJSONLines: sinkLines.first ?? "") == ["sinks-test"])
        #expect(sinkLines.last?.hasPrefix("sink 'console' (") == true, "\(sink.stdout)")
        let flush = try await PriceAlertBinary.run(["outbox", "flush"] + rules + ["--state", "st"], in: dir)
        #expect(flush.status == 0, "\(flush.stderr)")
        let demo = try await PriceAlertBinary.run(["demo"] + rules + ["--duration", "1s"], in: dir)
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stderr.contains("; 2 rules;"), "\(demo.stderr)")
    }

    /// With a listing, standard output is the listing alone: the rules' stdout sinks (here one of
    /// each kind) do not print it again, in either format, for `check` and `replay --dispatch`.
    @Test(arguments: ["json", "text"])
    func theListingIsAllOfStandardOutput(format: String) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        for arguments in [
            ["check", "--rules", "a.json", "b.json", "--ticks", "t.jsonl", "--format", format, "--state", "st"],
            ["replay", "--rules", "a.json", "b.json", "--ticks", "t.jsonl", "--format", format, "--dispatch"]
        ] {
            let result = try await PriceAlertBinary.run(arguments, in: dir)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 2, "\(arguments): \(result.stdout)")
            if format == "json" {
                #expect(try rules(inJSONLines: result.stdout) == ["a-btc", "b-btc"])
            } else {
                #expect(
                    lines.first?.contains("[a-btc] BTC") == true && lines.last?.contains("[b-btc] BTC") == true,
                    "\(result.stdout)")
            }
        }
        // Without --format, `check` prints what the stdout sinks print: a text and a JSON line for b-btc.
        let quiet = try await PriceAlertBinary.run(
            ["check", "--rules", "a.json", "b.json", "--ticks", "t.jsonl", "--state", "st2"], in: dir)
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.stdout.split(separator: "\n").count == 3, "\(quiet.stdout)")
    }
}
