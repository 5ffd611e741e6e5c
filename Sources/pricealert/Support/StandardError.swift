#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines for people on standard error: diagnostics, notes, summaries. Unbuffered `write(2)`,
/// so they appear at once and in order, and strict concurrency has no C global to object to.
enum StandardError {
    static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }

    static func write(lines: [String]) {
        if !lines.isEmpty { write(lines.joined(separator: "\n")) }
    }
}
