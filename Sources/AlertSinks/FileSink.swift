#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AlertCore
import AlertPolicy

/// Appends each alert's event (Docs/rules.md#the-alert-event) as one JSON line to a file (a
/// journal other tools can tail); a digest is one line too, its `DigestFormat.json` object.
///
/// The file is opened in `init` (created with mode 0600: alerts may be private) so a bad path
/// stops the program at start-up. Each line goes to the kernel with one `write(2)` on an
/// `O_APPEND` descriptor before `send` returns: a crash loses no alert already reported as
/// delivered, and concurrent sends never interleave within a line.
public final class FileSink: Sink {
    public let name: String
    public let path: String
    /// Owned; closed in `deinit`. Only read after `init`, so sharing it across tasks is safe.
    private let fd: Int32

    public init(name: String, path: String) throws(SinkError) {
        self.name = name
        self.path = path
        let opened = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let code = errno
            throw SinkError(sink: name, description: "file sink '\(name)': cannot open \(path): \(Self.reason(code, path))")
        }
        fd = opened
    }

    deinit {
        close(fd)
    }

    public func send(_ alert: Alert) async -> SinkResult {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        AlertFormat.appendJSON(alert, to: &line)
        line.append(UInt8(ascii: "\n"))
        return write(line)
    }

    public func send(_ delivery: Delivery) async -> SinkResult {
        switch delivery {
        case .event(let alert): return await send(alert)
        case .digest(let digest): return write(Array((DigestFormat.json(digest) + "\n").utf8))
        }
    }

    private func write(_ line: [UInt8]) -> SinkResult {
        switch line.withUnsafeBytes({ POSIXWrite.writeAll($0, to: fd) }) {
        case .success: return .delivered
        case .failure(let error): return .retry(reason: "cannot write \(path): \(error)", after: nil)
        }
    }

    /// Why `open` failed, in the user's terms: a missing folder is named as such.
    private static func reason(_ code: Int32, _ path: String) -> String {
        if code == ENOENT, let slash = path.lastIndex(of: "/") {
            let folder = slash == path.startIndex ? "/" : String(path[..<slash])
            var info = stat()
            if stat(folder, &info) != 0 && errno == ENOENT { return "folder '\(folder)' does not exist" }
        }
        return OSError(code: code).description
    }
}
