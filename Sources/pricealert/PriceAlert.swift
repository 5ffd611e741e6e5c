import ArgumentParser
import Platform

@main
struct PriceAlert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pricealert",
        abstract: "Watches crypto prices and tells you when your rules fire.",
        version: Version.current,
        subcommands: [
            ValidateCommand.self, ReplayCommand.self, CheckCommand.self, RunCommand.self, DemoCommand.self,
            MarketsCommand.self,
            RecordCommand.self, ExchangeCommand.self, SinksCommand.self, OutboxCommand.self, SilenceCommand.self,
            StoreCommand.self
        ]
    )

    /// Sets the process up (`ProcessSetUp`) before any command parses or runs.
    static func main() async {
        ProcessSetUp.atStart()
        await main(nil)
    }
}
