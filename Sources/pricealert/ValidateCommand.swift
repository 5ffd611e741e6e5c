import AlertModel
import AlertPipeline
import AlertSinks
import ArgumentParser
import Platform

/// `pricealert validate FILE...`: checks rule files together, as `run` would load them.
/// Exit 0 when valid (rules already past their `expires` are warned about on stderr, and do
/// not change the exit code), 65 (EX_DATAERR) for errors in the files, 66 (EX_NOINPUT) when a
/// file cannot be read.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check rule files.",
        discussion:
            "Prints every error as FILE:LINE:COLUMN: error: MESSAGE, and a rule already expired as FILE:LINE:COLUMN: warning: MESSAGE. With --markets, a symbol that a rule, portfolio or series names and the market list of its source lacks is a warning too. Exit codes: 0 valid (warnings or not), 64 a --markets NAME that the files do not define, 65 errors in the files or a market list file that is not one, 66 a file cannot be read."
    )

    @Argument(help: "Rule files, checked together (ids and sink names share one namespace).")
    var files: [String]

    @Option(
        help:
            "A market list to check the rules' symbols against: FILE, a BTSE initial/market payload, for symbols without a source; NAME=FILE, the rule files' source NAME's list in its exchange's REST format (repeatable)."
    )
    var markets: [String] = []

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one rule file") }
    }

    func run() async throws {
        let ruleSet = try Inputs.rules(files)
        StandardError.write(lines: ruleSet.expiryWarnings(now: Wallclock.millis()).map(\.description))
        if !markets.isEmpty {
            // What `run` would warn of once the lists arrive (Docs/sources.md#symbols-no-market-list-has).
            let files = try ExitCodes.exiting { try CommandInputs.marketOptions(markets, ruleSet: ruleSet) }
            let lists = try ExitCodes.exiting { try CommandInputs.sourceMarkets(files.bySource, ruleSet: ruleSet) }
            var feeds = lists.map { UnlistedSymbols.Feed(name: $0.key, tag: $0.key, subscribes: true, list: $0.value) }
            if let plain = files.plain {
                let list = try ExitCodes.exiting { try CommandInputs.markets(plain) }
                feeds.append(UnlistedSymbols.Feed(name: plain, tag: nil, subscribes: true, list: list))
            }
            let complete = ruleSet.sources.allSatisfy { files.bySource[$0.name] != nil }
            let findings = UnlistedSymbols.find(
                in: ruleSet, feeds: feeds.sorted { $0.name < $1.name }, complete: complete)
            StandardError.write(lines: findings.map { "pricealert: warning: \($0)" })
        }
        var counts = [
            count(files.count, "file"), count(ruleSet.rules.count, "rule"), count(ruleSet.sinks.count, "sink")
        ]
        // Version 3 definitions are counted when the files have any, so a summary of version 1
        // and 2 files reads as it always has.
        if !ruleSet.sources.isEmpty { counts.append(count(ruleSet.sources.count, "source")) }
        if !ruleSet.series.isEmpty { counts.append(count(ruleSet.series.count, "series", plural: "series")) }
        StandardOutput.shared.writeLine("ok: " + counts.joined(separator: ", "))
    }

    private func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
    }
}
