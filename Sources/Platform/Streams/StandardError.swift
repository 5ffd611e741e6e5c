#if canImport(Glibc)
import Glibc
#endif

/// Lines for people on standard error: diagnostics, notes, summaries. The same locked,
/// unbuffered writer as standard output, so lines appear at once, whole and in order.
public enum StandardError {
    private static let stream = StandardOutput(fileDescriptor: STDERR_FILENO)

    public static func write(_ line: String) {
        stream.writeLine(line)
    }

    public static func write(lines: [String]) {
        if !lines.isEmpty { write(lines.joined(separator: "\n")) }
    }
}
