import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// Why the lock no longer guards its folder, or nil while it does: the lock file was
    /// deleted (the open descriptor's file has no links left: the folder or the file was
    /// removed), or its path now names another file or nothing (the folder was moved away, or
    /// removed and made again). Either way another pricealert can lock the path now, and what
    /// this process writes goes to files nobody will read.
    public func lost() -> String? {
        fd.withLock { fd in
            guard fd >= 0 else { return nil }
            var held = stat()
            guard fstat(fd, &held) == 0 else { return "cannot check \(path): \(StateFolder.describe(errno))" }
            if held.st_nlink == 0 { return "\(path) was deleted" }
            var named = stat()
            guard stat(path, &named) == 0 else { return "\(path) is gone (\(StateFolder.describe(errno)))" }
            if named.st_ino != held.st_ino || named.st_dev != held.st_dev { return "\(path) is another file now" }
            return nil
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

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return String(s)
    }
}
