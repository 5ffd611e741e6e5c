import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The program's standard output. Every line the program prints goes through `shared`, whose
/// lock makes each line one uninterrupted write, so alert lines from sinks and the CLI's own
/// listings never interleave mid-line.
public final class StandardOutput: Sendable {
    public static let shared = StandardOutput(fileDescriptor: STDOUT_FILENO)

    private let fd: Int32
    /// Serializes writers; a line may need more than one `write(2)` when the kernel takes part.
    private let lock = Mutex(())

    /// `fileDescriptor` is not owned (never closed). Tests pass a pipe.
    public init(fileDescriptor: Int32) {
        fd = fileDescriptor
    }

    /// Writes `line` and a newline. Fails with the OS error, e.g. `isBrokenPipe` when the
    /// reader has gone away.
    @discardableResult
    public func writeLine(_ line: String) -> Result<Void, OSError> {
        lock.withLock { _ in POSIXWrite.writeLine(line, to: fd) }
    }

    /// Writes `lines` as they are: whole lines, each ending in a newline, in one uninterrupted
    /// write like `writeLine`.
    @discardableResult
    public func write(lines: [UInt8]) -> Result<Void, OSError> {
        lock.withLock { _ in lines.withUnsafeBytes { POSIXWrite.writeAll($0, to: fd) } }
    }
}
