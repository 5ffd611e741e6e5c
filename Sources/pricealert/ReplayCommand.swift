import ArgumentParser

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "replay", abstract: "Evaluate recorded ticks.")
    func run() async throws {}
}
