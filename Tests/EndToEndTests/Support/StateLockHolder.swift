import Foundation

/// Holds the lock of the state folder `folder` (created if needed) as a running pricealert would,
/// with this process's pid in the lock file, until `release()`.
struct StateLockHolder {
    let descriptor: Int32

    init(folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        descriptor = open(folder.path + "/pricealert.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { throw POSIXError(.EBUSY) }
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(descriptor, $0, strlen($0)) }
    }

    /// Unlocks before closing, as `StateLock` does: a child spawned meanwhile by another test
    /// holds a copy of the descriptor until its exec.
    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
