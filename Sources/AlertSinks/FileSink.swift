import AlertModel
import AlertPolicy
import AlertRules
import Platform
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends each alert's event (Docs/rules.md#the-alert-event) as one JSON line to a file (a
/// journal other tools can tail); a digest is one line too, its `DigestFormat.json` object.
///
/// The file is opened in `init` (created with mode 0600: alerts may be private) so a bad path
/// stops the program at start-up. A delivery is reported delivered only once its whole line
/// has gone to the kernel with `write(2)` on an `O_APPEND` descriptor: a crash loses no alert
/// already reported as delivered. Deliveries sent together (`send(_ deliveries:)`) go as
/// separate lines in their order, about 64 KiB of them per `write(2)`. One send writes at a
/// time, so concurrent sends never interleave within a line. When a write fails part-way
/// (a full disk), the lines it wrote whole are delivered and the others fail; a line it cut
/// is removed from the file (or, where the file cannot be cut, ended by a newline before the
/// next line), so every later line stays whole and none is written twice.
public final class FileSink: Sink {
    public let name: String
    public let path: String
    /// Owned; closed in `deinit`. Only read after `init`, so sharing it across tasks is safe.
    private let fd: Int32
    /// The one writer at a time, with its reusable buffers.
    private let writer = Mutex(Writer())

    /// Bytes of lines handed to one `write(2)`: a delivery's line is never split across two.
    static let chunkBytes = 65_536

    private struct Writer {
        var bytes: [UInt8] = []
        /// Where each line of `bytes` ends.
        var ends: [Int] = []
        /// An earlier write left the start of a line without its newline in the file.
        var unterminated = false
    }

    public init(name: String, path: String) throws(SinkError) {
        self.name = name
        self.path = path
        let opened = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let code = errno
            throw SinkError(
                sink: name, description: "file sink '\(name)': cannot open \(path): \(Self.reason(code, path))")
        }
        fd = opened
    }

    deinit {
        close(fd)
    }

    public func send(_ alert: Alert) async -> SinkResult {
        write([.event(alert)])[0]
    }

    public func send(_ delivery: Delivery) async -> SinkResult {
        write([delivery])[0]
    }

    /// Writes the deliveries' lines in order, about `chunkBytes` a `write(2)`; a result for each.
    public func send(_ deliveries: [Delivery]) async -> [SinkResult] {
        write(deliveries)
    }

    private func write(_ deliveries: [Delivery]) -> [SinkResult] {
        writer.withLock { writer in
            var results: [SinkResult] = []
            results.reserveCapacity(deliveries.count)
            var next = 0
            while next < deliveries.count {
                writer.bytes.removeAll(keepingCapacity: true)
                writer.ends.removeAll(keepingCapacity: true)
                if writer.unterminated { writer.bytes.append(UInt8(ascii: "\n")) }
                let firstLine = writer.bytes.count
                repeat {
                    Self.appendLine(deliveries[next], to: &writer.bytes)
                    writer.ends.append(writer.bytes.count)
                    next += 1
                } while next < deliveries.count && writer.bytes.count < Self.chunkBytes
                let (written, error) = writer.bytes.withUnsafeBytes { POSIXWrite.writeCounting($0, to: fd) }
                guard let error else {
                    writer.unterminated = false
                    results.append(contentsOf: repeatElement(.delivered, count: writer.ends.count))
                    continue
                }
                let whole = writer.ends.prefix { $0 <= written }.count
                results.append(contentsOf: repeatElement(.delivered, count: whole))
                // The newline that ends a line an earlier write cut went out if anything did; the
                // start of a line this write cut is removed, or else ended by the next write.
                if written >= firstLine { writer.unterminated = false }
                let lastEnd = whole > 0 ? writer.ends[whole - 1] : firstLine
                if written > lastEnd { writer.unterminated = !removeTail(written - lastEnd) }
                let failure = SinkResult.retry(reason: "cannot write \(path): \(error)", after: nil)
                results.append(contentsOf: repeatElement(failure, count: deliveries.count - results.count))
                break
            }
            return results
        }
    }

    /// Cuts the last `count` bytes off the file: the start of a line a failed write left there.
    /// Only when they are the file's end (nothing appended since) and the file can be cut.
    private func removeTail(_ count: Int) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        let end = lseek(fd, 0, SEEK_CUR) // after this descriptor's last write (O_APPEND)
        return end == info.st_size && ftruncate(fd, end - off_t(count)) == 0
    }

    private static func appendLine(_ delivery: Delivery, to out: inout [UInt8]) {
        switch delivery {
        case .event(let alert): AlertFormat.appendJSON(alert, to: &out)
        case .digest(let digest): out.append(contentsOf: DigestFormat.json(digest).utf8)
        }
        out.append(UInt8(ascii: "\n"))
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

extension FileSink {
    /// The `file` kind, for `SinkRegistry.all`.
    /// `path`: where to append, as written (relative to the working directory).
    public static let sinkType = SinkType(
        FileSettings.self, keys: ["path"],
        read: { checker in checker.string("path", required: true).map(FileSettings.init(path:)) },
        make: { name, settings, _ in try FileSink(name: name, path: settings.path) })
}
