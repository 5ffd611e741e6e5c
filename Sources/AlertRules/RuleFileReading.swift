#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A rule file that cannot be read at all. Not a `Diagnostic`: there is no line to point
/// at, and the command exits with a different code (66, EX_NOINPUT) for it.
public struct UnreadableFile: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// The system's words for it, e.g. `No such file or directory`.
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): error: cannot read file: \(reason)" }
}

/// Why `loadFiles` produced no `RuleSet`.
public enum RuleLoadFailure: Error, Sendable, Equatable {
    /// Some files could not be read; the others were not checked, since a missing file's
    /// sinks and ids would make the rest report misleading errors.
    case unreadable([UnreadableFile])
    case invalid(RuleFileErrors)
}

extension RuleLoader {
    /// Reads the files at `paths` and loads them together (see `load`).
    public static func loadFiles(
        paths: [String], sinkTypes: [SinkTypeCheck]
    ) -> Result<RuleSet, RuleLoadFailure> {
        readFiles(paths: paths).flatMap { load($0, sinkTypes: sinkTypes).mapError(RuleLoadFailure.invalid) }
    }

    /// The files at `paths`, or every one that cannot be read.
    public static func readFiles(paths: [String]) -> Result<[RuleSource], RuleLoadFailure> {
        var sources: [RuleSource] = []
        var unreadable: [UnreadableFile] = []
        for path in paths {
            switch readFile(path) {
            case .success(let bytes): sources.append(RuleSource(path: path, bytes: bytes))
            case .failure(let problem): unreadable.append(problem)
            }
        }
        return unreadable.isEmpty ? .success(sources) : .failure(.unreadable(unreadable))
    }

    /// The largest rule file read: room for a million rules. A bigger one (or an endless one,
    /// like `/dev/zero`) is refused once this much has been read.
    public static let fileLimit = 128 << 20

    /// The whole file at `path`, read with plain POSIX calls (no Foundation in this module)
    /// into one buffer of the file's size, so a big file is held once, not grown by copies.
    /// At most `limit` bytes: a longer file is an `UnreadableFile` saying so.
    public static func readFile(_ path: String, limit: Int = fileLimit) -> Result<[UInt8], UnreadableFile> {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return .failure(UnreadableFile(path: path, reason: systemError())) }
        defer { close(descriptor) }
        var status = stat()
        let size = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG ? Int(status.st_size) : 0
        let tooLarge = UnreadableFile(path: path, reason: "larger than \(limit >> 20) MiB, the limit for a rule file")
        guard size <= limit else { return .failure(tooLarge) }
        // One byte more than the size, so the read that finds the end needs no room to grow;
        // and one more than the limit at most, so the read that passes it is seen.
        var bytes = [UInt8](repeating: 0, count: min(max(size + 1, 65_536), limit + 1))
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= limit else { return .failure(tooLarge) }
                bytes += [UInt8](repeating: 0, count: min(bytes.count, limit + 1 - bytes.count))
            }
            let n = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if n == 0 {
                bytes.removeLast(bytes.count - count)
                return .success(bytes)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(UnreadableFile(path: path, reason: systemError()))
            }
            count += n
        }
    }

    private static func systemError() -> String {
        String(cString: strerror(errno))
    }
}
