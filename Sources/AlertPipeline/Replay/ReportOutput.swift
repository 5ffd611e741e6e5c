import AlertModel
import AlertReport
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// `replay --report FILE`: the page of what the rules would have sent. The file is created
/// before the replay runs, so a path that cannot be written fails at once; the page is written
/// once the replay is done.
struct ReportOutput {
    let path: String
    private let output: StandardOutput
    var report: ReplayReport

    /// Creates (or empties) `path`; exit 73 naming it when it cannot.
    init(path: String, rules: [Rule], ruleFiles: [String], ticks: String) throws(CommandFailure) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CommandFailure(
                .cannotCreate, error: "cannot open report \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        output = StandardOutput(fileDescriptor: fd)
        report = ReplayReport(
            ruleIDs: rules.map(\.id),
            sources: [("Rules", ruleFiles.joined(separator: ", ")), ("Ticks", ticks)])
    }

    /// Writes the page; exit 73 naming the file when it cannot.
    func write() throws(CommandFailure) {
        if case .failure(let error) = output.writeLine(report.html()) {
            throw CommandFailure(.cannotCreate, error: "cannot write report \(path): \(error)")
        }
        StandardError.write("replay: report written to \(path)")
    }
}
