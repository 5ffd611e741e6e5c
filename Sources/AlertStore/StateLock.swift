#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// An exclusive `flock` on `DIR/pricealert.lock`, so two processes never deliver the same
/// outbox. The holder writes its pid into the file so the loser can name it. The kernel drops
/// the lock when the process dies (even on `kill -9`), so a stale file never blocks a restart.
/// Two opens in one process also exclude each other (flock belongs to the open file).
public final class StateLock: Sendable {
    public let path: String
    /// The descriptor, -1 once released. Behind a mutex so `release` may run from any task.
    private let fd: Mutex<Int32>

    public init(folder: StateFolder) throws(StateError) {
        let path = folder.lockPath
        self.path = path
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            throw StateError(path: folder.path, reason: "cannot open \(path): \(StateFolder.describe(errno))")
        }
        if flock(opened, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            let holder = Self.readPid(opened)
            close(opened)
            if code == EWOULDBLOCK {
                throw StateError(path: folder.path, reason: "locked", lockedBy: holder ?? 0)
            }
            throw StateError(path: folder.path, reason: "cannot lock \(path): \(StateFolder.describe(code))")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(opened, 0)
        _ = pid.withCString { pwrite(opened, $0, strlen($0), 0) }
        fd = Mutex(opened)
    }

    deinit {
        release()
    }

    /// Gives the lock up (idempotent). Unlocks before closing: a child being spawned by another
    /// thread holds a copy of the descriptor until its exec, and closing alone would leave the
    /// lock held until then.
    public func release() {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    private static func readPid(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, 31, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return Int32(text.trimmingCharacters(in: "\n "))
    }
}

private extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return String(s)
    }
}
