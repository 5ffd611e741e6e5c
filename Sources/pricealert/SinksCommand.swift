import AlertModel
import AlertPipeline
import AlertSinks
import ArgumentParser
import Platform

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
        let outcome = await SinkTest.send(through: sink, named: name, definition: definition)
        StandardOutput.shared.writeLine(outcome.line)
        if !outcome.delivered { throw ExitCodes.deliveryFailed }
    }
}
