import AlertRules
import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `pricealert validate FILE...`: checks rule files together, as `run` would load them.
/// Exit 0 when valid, 65 (EX_DATAERR) for errors in the files, 66 (EX_NOINPUT) when a file
/// cannot be read.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check rule files.",
        discussion: "Prints every error as FILE:LINE:COLUMN: error: MESSAGE. Exit codes: 0 valid, 65 errors in the files, 66 a file cannot be read.")

    @Argument(help: "Rule files, checked together (ids and sink names share one namespace).")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one rule file") }
    }

    func run() async throws {
        switch RuleLoader.loadFiles(paths: files) {
        case .success(let ruleSet):
            print("ok: \(count(files.count, "file")), \(count(ruleSet.rules.count, "rule")), \(count(ruleSet.sinks.count, "sink"))")
        case .failure(.unreadable(let problems)):
            printErrors(problems.map(\.description))
            throw ExitCode(66)
        case .failure(.invalid(let errors)):
            printErrors(errors.diagnostics.map(\.description))
            throw ExitCode(65)
        }
    }

    private func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    private func printErrors(_ lines: [String]) {
        // write(2) rather than the C `stderr` global, which strict concurrency rejects.
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
