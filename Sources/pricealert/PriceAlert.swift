import ArgumentParser
import CMemory

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

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Before any other thread allocates (Sources/CMemory/include/pa_memory.h says what it buys).
        _ = pa_configure_malloc(["run", "demo"].contains(arguments.first) ? 1 : 0)
        await main(nil)
    }
}
