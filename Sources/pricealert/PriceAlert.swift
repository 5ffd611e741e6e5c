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
        // Before any other thread allocates (Sources/CMemory/include/pa_memory.h says what these buy).
        _ = pa_configure_malloc(["run", "demo"].contains(arguments.first) ? 1 : 0)
        var released: (UnsafeMutableRawPointer?, Int) = (nil, 0)
        _ = pa_release_relocations(&released.0, &released.1)
        await main(nil)
    }
}
