#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed `write(2)` or `open(2)`: the errno and its text.
public struct OSError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    /// `strerror(code)`, e.g. `Broken pipe`.
    public var description: String { String(cString: strerror(code)) }

    public init(code: Int32) {
        self.code = code
    }

    /// The reader of a pipe went away (`pricealert … | head`).
    public var isBrokenPipe: Bool { code == EPIPE }
}

public enum POSIXWrite {
    /// Writes all of `text` plus a newline to `fd` (see `writeAll(_:to:)`).
    public static func writeLine(_ text: String, to fd: Int32) -> Result<Void, OSError> {
        var line = text
        line.append("\n")
        return line.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: fd) }
    }

    /// Writes all of `bytes` to `fd`, in one `write(2)` unless the kernel takes only part
    /// (then it loops). Retries on EINTR. Needs SIGPIPE ignored to see EPIPE instead of dying
    /// (see `ProcessSetUp.atStart()`).
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Result<Void, OSError> {
        if let error = writeCounting(bytes, to: fd).error { return .failure(error) }
        return .success(())
    }

    /// Writes as `writeAll(_:to:)` does, and says how many bytes went to the kernel before an
    /// error stopped it (all of them when `error` is nil).
    public static func writeCounting(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> (written: Int, error: OSError?) {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return (done, OSError(code: n < 0 ? errno : EIO))
            }
        }
        return (done, nil)
    }
}
