import AlertModel
import AlertSinks
import ArgumentParser
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// `pricealert sinks …`: acting on the sinks of rule files.
struct SinksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sinks",
        abstract: "Work with the sinks defined in rule files.",
        subcommands: [SinksTestCommand.self])
}

/// `pricealert sinks test NAME --rules R...`: one sample alert through one sink, once (no
/// retries), and what happened: `sink 'ops' (webhook): delivered in 12.3 ms`.
/// Exit codes: 0 delivered, 64 unknown sink, 65/66 rule file errors, 73 the sink cannot be set
/// up, 74 the delivery failed.
struct SinksTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Send one sample alert through a sink and report the outcome.",
        discussion:
            "The alert has rule 'sinks-test', symbol BTC and the message 'pricealert test alert'. It is sent once, never retried. Exit codes: 0 delivered, 64 unknown sink, 65 rule file errors, 66 unreadable rule file, 73 the sink cannot be set up, 74 not delivered."
    )

    @Argument(help: "The sink's name in the rule files' 'sinks' object (or 'stdout').")
    var name: String

    @OptionGroup var rules: RulesOption

    func run() async throws {
        let ruleSet = try rules.load()
        guard let definition = ruleSet.sinks[name] else {
            let known = ruleSet.sinks.keys.sorted().map { UserText.single($0) }.joined(separator: ", ")
            StandardError.write("pricealert: error: no sink named \(UserText.single(name)); known sinks: \(known)")
            throw ExitCodes.usage
        }
        let sink: any Sink
        do {
            sink = try SinkFactory.make(definition)
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.cannotCreate
        }
        let start = Monotonic.nanoseconds()
        let result = await sink.send(Self.sampleAlert(notify: [name]))
        let elapsed = Double(Monotonic.nanoseconds() - start) / 1_000_000
        let label = "sink \(UserText.single(name)) (\(definition.kind.typeName))"
        switch result {
        case .delivered:
            StandardOutput.shared.writeLine("\(label): delivered in \(Self.milliseconds(elapsed))")
        case .retry(let reason, let after):
            let wait = after.map { " after \($0) ms" } ?? ""
            StandardOutput.shared.writeLine(
                "\(label): failed in \(Self.milliseconds(elapsed)): \(reason) — would retry\(wait)")
            throw ExitCodes.deliveryFailed
        case .permanent(let reason):
            StandardOutput.shared.writeLine(
                "\(label): failed in \(Self.milliseconds(elapsed)): \(reason) — permanent (not retried)")
            throw ExitCodes.deliveryFailed
        }
    }

    /// Rule `sinks-test`, BTC at a plausible price crossing a round threshold, now.
    static func sampleAlert(notify: [String]) -> Alert {
        Alert(
            rule: "sinks-test", symbol: "BTC", time: Wallclock.millis(), price: 100_012.5,
            condition: "price crossesAbove 100000", threshold: .value(100_000), value: 100_012.5,
            message: "pricealert test alert", notify: notify)
    }

    /// `12.3 ms` below a second, `5001 ms` above.
    static func milliseconds(_ value: Double) -> String {
        if value >= 1000 { return "\(Int(value.rounded())) ms" }
        return "\((value * 10).rounded() / 10) ms"
    }
}
