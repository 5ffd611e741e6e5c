#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Runs one program to completion with `posix_spawnp` (argv as given, never a shell), on a
/// thread of its own so no cooperative thread waits for it.
///
/// The child gets `stdin` through a pipe, standard output on /dev/null and standard error on a
/// pipe we read (first `stderrLimit` bytes kept). It leads a new process group, so a timeout
/// can stop everything it started: SIGTERM to the group, then SIGKILL after `killGrace`.
enum ChildProcess {
    enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
        /// `posix_spawnp` failed: the program is missing or not executable (errno).
        case spawnFailed(Int32)
    }

    struct Outcome: Sendable {
        var ending: Ending
        var stderr: [UInt8]
    }

    static let stderrLimit = 4096
    static let killGrace: Int64 = 500

    /// Runs on a new detached thread and resumes when the child has ended (or been killed).
    static func run(_ argv: [String], environment: [String], stdin: [UInt8], timeout: Int64) async -> Outcome {
        await withCheckedContinuation { continuation in
            let job = Job { continuation.resume(returning: runBlocking(argv, environment: environment, stdin: stdin, timeout: timeout)) }
            let retained = Unmanaged.passRetained(job).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(&thread, nil, { argument in
                Unmanaged<Job>.fromOpaque(argument!).takeRetainedValue().body()
                return nil
            }, retained)
            if rc == 0 {
                pthread_detach(thread)
            } else {
                Unmanaged<Job>.fromOpaque(retained).release()
                continuation.resume(returning: Outcome(ending: .spawnFailed(rc), stderr: Array("cannot start a thread".utf8)))
            }
        }
    }

    private final class Job: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// The blocking part: spawn, feed stdin, read stderr, wait with a deadline.
    static func runBlocking(_ argv: [String], environment: [String], stdin input: [UInt8], timeout: Int64) -> Outcome {
        guard let (inPipe, errPipe) = makePipes() else { return Outcome(ending: .spawnFailed(errno), stderr: []) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A new process group (so a timeout kills all of it), no blocked signals, and SIGPIPE
        // back to its default (pricealert ignores it, and ignored signals survive exec).
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup($0) } + [nil]
        defer {
            for p in cArgs { free(p) }
            for p in cEnv { free(p) }
        }
        var pid = pid_t()
        let spawned = spawnLock.withLock { _ in posix_spawnp(&pid, argv[0], &actions, &attributes, cArgs, cEnv) }
        close(inPipe[0])
        close(errPipe[1])
        guard spawned == 0 else {
            close(inPipe[1]); close(errPipe[0])
            return Outcome(ending: .spawnFailed(spawned), stderr: [])
        }

        feed(input, to: inPipe[1])
        let start = monotonicMilliseconds()
        let deadline = start + timeout
        var stderr: [UInt8] = []
        var stderrOpen = true
        var status: Int32 = 0
        var reaped = false
        var timedOut = false
        while true {
            if !reaped, waitpid(pid, &status, WNOHANG) == pid { reaped = true }
            if reaped {
                if stderrOpen { readAvailable(errPipe[0], into: &stderr, wait: 0) }
                break
            }
            let remaining = deadline - monotonicMilliseconds()
            if remaining <= 0 {
                timedOut = true
                break
            }
            if stderrOpen {
                stderrOpen = readAvailable(errPipe[0], into: &stderr, wait: Int32(min(remaining, 10)))
            } else {
                usleep(UInt32(min(remaining, 1)) * 1000)
            }
        }
        close(errPipe[0])
        if timedOut {
            kill(-pid, SIGTERM)
            let graceEnd = monotonicMilliseconds() + killGrace
            while waitpid(pid, &status, WNOHANG) != pid {
                if monotonicMilliseconds() >= graceEnd {
                    kill(-pid, SIGKILL)
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    break
                }
                usleep(5_000)
            }
            kill(-pid, SIGKILL)  // whatever the child left behind in its group
            return Outcome(ending: .timedOut, stderr: stderr)
        }
        let exitCode = (status >> 8) & 0xFF
        let signal = status & 0x7F
        return Outcome(ending: signal == 0 ? .exited(exitCode) : .signaled(signal), stderr: stderr)
    }

    /// Held while pipes are made close-on-exec and while spawning, so a child spawned by
    /// another send never inherits this child's pipe ends (Glibc does not export `pipe2`).
    private static let spawnLock = Mutex(())

    /// Stdin and stderr pipes, all four ends close-on-exec (the child gets its ends by dup2).
    private static func makePipes() -> (input: [Int32], error: [Int32])? {
        spawnLock.withLock { _ in
            var input: [Int32] = [-1, -1]
            var error: [Int32] = [-1, -1]
            guard pipe(&input) == 0 else { return nil }
            guard pipe(&error) == 0 else {
                let code = errno
                close(input[0]); close(input[1])
                errno = code
                return nil
            }
            for fd in input + error { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (input, error)
        }
    }

    /// Writes what the pipe takes without blocking (an alert is far below the 64 KiB pipe
    /// buffer), then closes it so the child sees end of input. A child that exits without
    /// reading gives EPIPE, which is ignored.
    private static func feed(_ bytes: [UInt8], to fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { break }
            }
        }
        close(fd)
    }

    /// Waits up to `wait` ms for `fd`, reads what is there (keeping up to `stderrLimit` bytes);
    /// false at end of file.
    @discardableResult
    private static func readAvailable(_ fd: Int32, into kept: inout [UInt8], wait: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, wait) > 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 {
            kept += buffer[0..<min(n, max(0, stderrLimit - kept.count))]
            return true
        }
        return n < 0 && (errno == EINTR || errno == EAGAIN)
    }

    static func monotonicMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
