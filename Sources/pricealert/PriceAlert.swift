import ArgumentParser

@main
struct PriceAlert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pricealert",
        abstract: "Watches crypto prices and tells you when your rules fire.",
        version: Version.current,
        subcommands: [
            ValidateCommand.self, ReplayCommand.self, CheckCommand.self, RunCommand.self, DemoCommand.self, MarketsCommand.self,
            RecordCommand.self, ExchangeCommand.self, SinksCommand.self, OutboxCommand.self, SilenceCommand.self,
        ]
    )
}
