#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file the program reads input from (a tick file, a saved market list), by path or `-` for
/// standard input. Plain POSIX so errors carry the OS reason, e.g.
/// `cannot open ticks.jsonl: No such file or directory`.
struct InputFile: ~Copyable {
    let fd: Int32
    /// The path as the user wrote it (`-` for standard input), for messages.
    let path: String

    init(path: String) throws(InputFileError) {
        self.path = path
        if path == "-" {
            fd = STDIN_FILENO
            return
        }
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { throw InputFileError(action: "open", path: path, errno: errno) }
        var info = stat()
        if fstat(opened, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { // open(2) accepts folders
            close(opened)
            throw InputFileError(action: "open", path: path, errno: EISDIR)
        }
        fd = opened
    }

    deinit {
        if fd != STDIN_FILENO { close(fd) }
    }

    /// Reads up to `buffer.count` bytes; 0 at the end of the file. Retries on EINTR.
    func readChunk(into buffer: UnsafeMutableRawBufferPointer) throws(InputFileError) -> Int {
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw InputFileError(action: "read", path: path, errno: errno) }
        }
    }

    /// The most `readAll` reads: far more than any market list, and an endless input (a FIFO,
    /// `/dev/zero`) ends with an error instead of filling the memory.
    static let wholeFileLimit = 64 << 20

    /// The whole file (for small inputs loaded once, like a market list), at most `limit` bytes.
    func readAll(limit: Int = wholeFileLimit) throws(InputFileError) -> [UInt8] {
        var result: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = try readChunk(into: chunk)
            if n == 0 { return result }
            guard result.count + n <= limit else {
                throw InputFileError(action: "read", path: path, reason: "larger than \(limit >> 20) MiB")
            }
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
    }
}

/// Opening or reading an input file failed. `description`: `cannot open PATH: REASON`.
public struct InputFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `open` or `read`.
    public let action: String
    public let path: String
    /// The OS reason, e.g. `No such file or directory`.
    public let reason: String

    init(action: String, path: String, errno code: Int32) {
        self.init(action: action, path: path, reason: String(cString: strerror(code)))
    }

    init(action: String, path: String, reason: String) {
        self.action = action
        self.path = path
        self.reason = reason
    }

    public var description: String { "cannot \(action) \(path == "-" ? "standard input" : path): \(reason)" }
}
