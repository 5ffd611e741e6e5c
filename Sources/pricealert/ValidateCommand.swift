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
            "Prints every error as FILE:LINE:COLUMN: error: MESSAGE, and a rule already expired as FILE:LINE:COLUMN: warning: MESSAGE. Exit codes: 0 valid (warnings or not), 65 errors in the files, 66 a file cannot be read."
    )

    @Argument(help: "Rule files, checked together (ids and sink names share one namespace).")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one rule file") }
    }

    func run() async throws {
        let ruleSet = try Inputs.rules(files)
        StandardError.write(lines: ruleSet.expiryWarnings(now: Wallclock.millis()).map(\.description))
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
