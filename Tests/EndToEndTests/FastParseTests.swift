import AlertTestSupport
@testable import pricealert
import Testing
import SeededRandom

/// `CheckCommand.fastParse` (a cron `check` without swift-argument-parser's reflection) against
/// ArgumentParser's own parse of the same arguments: whatever the fast parse accepts,
/// ArgumentParser accepts with the same values; what it refuses goes to ArgumentParser anyway.
@Suite struct FastParseTests {
    /// Every value of a parsed `check`, to compare two parses.
    static func values(_ c: CheckCommand) -> String {
        "\(c.rules.files)|\(String(describing: c.source))|\(String(describing: c.endpoint))|\(String(describing: c.ticks))|"
            + "\(String(describing: c.markets))|\(c.marketsEvery.duration)|\(String(describing: c.format))|\(c.exitCode)|"
            + "\(c.drainTimeout.duration)|\(String(describing: c.state.path))"
    }

    /// Names of the argument properties (`@Option`, `@Flag`, `@OptionGroup`, nested) that hold
    /// no value: reading one would stop the program, so a fast-parsed command must have none.
    static func unset(_ value: Any, path: String = "") -> [String] {
        var found: [String] = []
        for child in Mirror(reflecting: value).children {
            guard let label = child.label, label.hasPrefix("_") else { continue }
            guard let parsed = Mirror(reflecting: child.value).children.first(where: { $0.label == "_parsedValue" }) else { continue }
            let state = Mirror(reflecting: parsed.value).children.first
            if state?.label == "definition" {
                found.append(path + label)
            } else if let group = state?.value, String(describing: type(of: child.value)).hasPrefix("OptionGroup") {
                found += unset(group, path: path + label + ".")
            }
        }
        return found
    }

    static let sources: [[String]] = [
        ["--ticks", "t.jsonl"], ["--ticks=t.jsonl"], ["--source", "btse"], ["--source=coingecko"],
        ["--source", "btse", "--endpoint", "http://127.0.0.1:1"], ["--source", "poloniex", "--endpoint=http://127.0.0.1:2/x"],
    ]
    /// Per option, the forms a command line may use it in (each option at most once; `--rules` more).
    static let extras: [[[String]]] = [
        [["--state", "st"], ["--state=/var/lib/p"]], [["--markets", "m.json"], ["--markets=m.json"]],
        [["--markets-every", "30m"], ["--markets-every=1h30m"]], [["--format", "json"], ["--format=text"]],
        [["--exit-code"]], [["--drain-timeout", "5s"], ["--drain-timeout=2m"]], [["--rules", "more.json"], ["--rules", "more.json", "other.json"]],
        [["--rules=third.json"], ["--rules=third.json", "fourth.json"]],
    ]

    @Test func cronCommandLinesAreReadAsArgumentParserReadsThem() throws {
        var rng = SeededRandom(seed: 7)
        var accepted = 0
        for source in Self.sources {
            for _ in 0..<40 {
                var groups = [["--rules", "r.json"], source]
                for forms in Self.extras where Bool.random(using: &rng) { groups.append(forms.randomElement(using: &rng)!) }
                let arguments = groups.shuffled(using: &rng).flatMap { $0 }
                let slow = try CheckCommand.parse(arguments)
                let fast = try #require(CheckCommand.fastParse(arguments), "\(arguments)")
                // First that every property has a value (reading one that has none stops the process).
                let missing = Self.unset(fast)
                #expect(missing.isEmpty, "\(arguments): \(missing)")
                guard missing.isEmpty else { continue }
                #expect(Self.values(fast) == Self.values(slow), "\(arguments)")
                accepted += 1
            }
        }
        #expect(accepted == 240)
        // The check itself: a parse by ArgumentParser leaves nothing unset either.
        #expect(Self.unset(try CheckCommand.parse(["--rules", "r.json", "--ticks", "t"])).isEmpty)
        #expect(Self.unset(CheckCommand()) .count >= 10)
    }

    /// What the fast parse leaves to ArgumentParser: help, errors, and forms it does not read.
    @Test(arguments: [
        [], ["--help"], ["-h"], ["--rules", "r.json"], ["--ticks", "t"], ["--rules", "r.json", "--ticks"],
        ["--rules", "r.json", "--ticks", "t", "--source", "btse"], ["--rules", "r.json", "--endpoint", "http://x", "--ticks", "t"],
        ["--rules", "r.json", "--source", "nope"], ["--rules", "r.json", "--ticks", "t", "--format", "xml"],
        ["--rules", "r.json", "--ticks", "t", "--markets-every", "0s"], ["--rules", "r.json", "--ticks", "t", "--drain-timeout", "soon"],
        ["--rules", "r.json", "--ticks", "t", "--unknown", "x"], ["--rules", "r.json", "--ticks", "t", "extra"],
        ["--rules", "r.json", "--ticks", "-"], ["--rules", "r.json", "--ticks", "t", "--exit-code", "--exit-code"],
        ["--rules", "r.json", "--ticks", "t", "--exit-code=yes"], ["--rules", "r.json", "--ticks", "t", "--state", "a", "--state", "b"],
        ["--rules", "r.json", "--ticks", "t", "--", "x"], ["--rules=", "--ticks", "t"], ["--rules", "r.json", "--ticks", "t", "--generate-completion-script", "bash"],
    ] as [[String]])
    func everythingElseGoesToArgumentParser(arguments: [String]) {
        #expect(CheckCommand.fastParse(arguments) == nil)
    }
}
