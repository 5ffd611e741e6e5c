#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files of the state folder that are replaced whole (`listings.txt`, `rules.cache`).
enum PrivateFile {
    /// Replaces `path` with `bytes` atomically: written to a temporary file of mode 0600
    /// (whatever the umask: the folder's files are private), synced, then renamed over `path`,
    /// so a reader, or the next start after a crash, sees the old file or the new one.
    /// Throws the failing step and its `errno` text.
    static func replace(_ path: String, with bytes: [UInt8]) throws(StateError) {
        let temporary = path + ".\(getpid()).tmp"
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        func failure(_ what: String, _ code: Int32) -> StateError {
            StateError(path: folder, reason: "\(what): \(StateFolder.describe(code))")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)", errno) }
        // A temporary file a crash left keeps its mode through O_TRUNC.
        var failed: (what: String, code: Int32)?
        if fchmod(descriptor, 0o600) != 0 { failed = ("cannot make \(temporary) private", errno) }
        var written = 0
        while failed == nil, written < bytes.count {
            let n = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                failed = ("cannot write \(temporary)", n < 0 ? errno : ENOSPC)
                break
            }
            written += n
        }
        if failed == nil, fsync(descriptor) != 0 { failed = ("cannot sync \(temporary)", errno) }
        close(descriptor)
        if failed == nil, rename(temporary, path) != 0 { failed = ("cannot rename \(temporary) to \(path)", errno) }
        if let (what, code) = failed {
            unlink(temporary)
            throw failure(what, code)
        }
    }
}
