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

    /// A `check` command line that `CheckCommand.fastParse` fully understands runs without
    /// swift-argument-parser's parse; every other command line goes through it.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Before any other thread allocates: a daemon's peak memory is lower with one heap
        // that grows by what is asked (see Docs/performance.md).
        _ = pa_configure_malloc(["run", "demo"].contains(arguments.first) ? 1 : 0)
        // The loader is done with the executable's relocation table (megabytes in the static
        // build): its pages need not stay in this process's memory for the whole run.
        var released: (UnsafeMutableRawPointer?, Int) = (nil, 0)
        _ = pa_release_relocations(&released.0, &released.1)
        guard arguments.first == "check", let check = CheckCommand.fastParse(Array(arguments.dropFirst())) else {
            await main(nil)
            return
        }
        do {
            try await check.run()
        } catch {
            exit(withError: error)
        }
    }
}
