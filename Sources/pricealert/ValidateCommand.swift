import ArgumentParser

struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "validate", abstract: "Check rule files.")
    func run() async throws {}
}
