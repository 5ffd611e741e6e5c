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
    public static func loadFiles(paths: [String]) -> Result<RuleSet, RuleLoadFailure> {
        var sources: [RuleSource] = []
        var unreadable: [UnreadableFile] = []
        for path in paths {
            switch readFile(path) {
            case .success(let bytes): sources.append(RuleSource(path: path, bytes: bytes))
            case .failure(let problem): unreadable.append(problem)
            }
        }
        guard unreadable.isEmpty else { return .failure(.unreadable(unreadable)) }
        return load(sources).mapError(RuleLoadFailure.invalid)
    }

    /// The whole file at `path`, read with plain POSIX calls (no Foundation in this module).
    public static func readFile(_ path: String) -> Result<[UInt8], UnreadableFile> {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return .failure(UnreadableFile(path: path, reason: systemError())) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(bytes) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(UnreadableFile(path: path, reason: systemError()))
            }
            bytes += chunk[0..<count]
        }
    }

    private static func systemError() -> String {
        String(cString: strerror(errno))
    }
}
