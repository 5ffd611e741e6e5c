import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs one program to completion with `posix_spawnp` (argv as given, never a shell), on a
/// thread of its own so no cooperative thread waits for it.
///
/// The child gets `stdin` through a pipe, written whole as it reads (or until it exits or the
/// timeout), standard output on /dev/null and standard error on a pipe we read (first
/// `stderrLimit` bytes kept), and no other descriptor of pricealert's. It leads a new process
/// group, and nothing of that group outlives the run: when the child ends, whatever it left
/// running in the group is killed (SIGKILL); on a timeout the group gets SIGTERM, then SIGKILL
/// after `killGrace`; and when pricealert exits, every group still running gets the same
/// (`stopAll`, which `ProcessSetUp.atStart` registers with `atexit`).
public enum ChildProcess {
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
        /// `posix_spawnp` failed: the program is missing or not executable (errno).
        case spawnFailed(Int32)
        /// Not started: pricealert is exiting (`stopAll` has begun).
        case exiting
    }

    public struct Outcome: Sendable {
        public var ending: Ending
        public var stderr: [UInt8]
    }

    public static let stderrLimit = 4096

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later), which its
    /// header declares only under `_GNU_SOURCE`, as Swift's Glibc module is not built: found by
    /// name once. nil on other C libraries.
    private static let addCloseFrom: CloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    public static let killGrace: Int64 = 500

    /// Runs on a new detached thread and resumes when the child has ended (or been killed).
    public static func run(_ argv: [String], environment: [String], stdin: [UInt8], timeout: Int64) async -> Outcome {
        await withCheckedContinuation { continuation in
            let job = Job {
                continuation.resume(
                    returning: runBlocking(argv, environment: environment, stdin: stdin, timeout: timeout))
            }
            let retained = Unmanaged.passRetained(job).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(
                &thread, nil,
                { argument in
                    Unmanaged<Job>.fromOpaque(argument!).takeRetainedValue().body()
                    return nil
                }, retained)
            if rc == 0 {
                pthread_detach(thread)
            } else {
                Unmanaged<Job>.fromOpaque(retained).release()
                continuation.resume(
                    returning: Outcome(ending: .spawnFailed(rc), stderr: Array("cannot start a thread".utf8)))
            }
        }
    }

    private final class Job: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// The blocking part: spawn, feed stdin, read stderr, wait with a deadline.
    static func runBlocking(_ argv: [String], environment: [String], stdin input: [UInt8], timeout: Int64) -> Outcome {
        precondition(ProcessSetUp.isDone, "ProcessSetUp.atStart() must run before an exec sink starts a child")
        guard let (inPipe, errPipe) = makePipes() else { return Outcome(ending: .spawnFailed(errno), stderr: []) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // Nothing else: not the `--listen` socket, the feed's connections, epoll or eventfd
        // descriptors, nor the pipes' other ends. Descriptors opened without O_CLOEXEC (by
        // libraries) would otherwise live on in whatever the notifier leaves running, keeping a
        // port bound after pricealert exits.
        _ = addCloseFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A new process group (so it can be stopped as a whole), no blocked signals, and SIGPIPE
        // back to its default (pricealert ignores it, and ignored signals survive exec).
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
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
        // Under the spawn lock, so that once `stopAll` has begun no child starts, and every
        // child started before is in `groups` for it to stop.
        let spawned: Int32? = spawnLock.withLock { exiting in
            if exiting { return nil }
            let rc = posix_spawnp(&pid, argv[0], &actions, &attributes, cArgs, cEnv)
            if rc == 0 { groups.withLock { _ = $0.insert(pid) } }
            return rc
        }
        close(inPipe[0])
        close(errPipe[1])
        guard spawned == 0 else {
            close(inPipe[1]); close(errPipe[0])
            return Outcome(ending: spawned.map { .spawnFailed($0) } ?? .exiting, stderr: [])
        }

        let (sum, overflow) = Monotonic.milliseconds().addingReportingOverflow(timeout)
        let deadline = overflow ? Int64.max : sum
        var input = Input(fd: inPipe[1], bytes: input)
        var stderr: [UInt8] = []
        var stderrOpen = true
        var ended = false
        while !ended {
            let remaining = deadline - Monotonic.milliseconds()
            if remaining <= 0 { break }
            // A child's end is no descriptor event: look again every 10 ms.
            let wait = Int32(min(remaining, 10))
            var pollers = [
                pollfd(fd: stderrOpen ? errPipe[0] : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: input.fd, events: Int16(POLLOUT), revents: 0)
            ]
            if poll(&pollers, 2, wait) > 0 {
                if pollers[1].revents != 0 { input.feed() }
                if pollers[0].revents != 0 { stderrOpen = readAvailable(errPipe[0], into: &stderr) }
            }
            ended = hasEnded(pid)
        }
        input.end()
        if ended, stderrOpen {
            // What the child wrote before it ended (a grandchild may hold the pipe open: no wait).
            _ = fcntl(errPipe[0], F_SETFL, fcntl(errPipe[0], F_GETFL) | O_NONBLOCK)
            while stderr.count < stderrLimit, readAvailable(errPipe[0], into: &stderr), hasData(errPipe[0]) {}
        }
        close(errPipe[0])
        if !ended {
            kill(-pid, SIGTERM)
            let graceEnd = Monotonic.milliseconds() + killGrace
            while !hasEnded(pid), Monotonic.milliseconds() < graceEnd { usleep(5_000) }
        }
        let status = finish(pid)
        guard ended else { return Outcome(ending: .timedOut, stderr: stderr) }
        let exitCode = (status >> 8) & 0xFF
        let signal = status & 0x7F
        return Outcome(ending: signal == 0 ? .exited(exitCode) : .signaled(signal), stderr: stderr)
    }

    /// Process groups of children not yet reaped. A group leaves the set before its leader is
    /// reaped, so every id in it still names that group (a zombie leader keeps its id taken).
    private static let groups = Mutex<Set<pid_t>>([])

    /// Whether the child has ended, leaving it unreaped (a zombie) so its group id stays ours.
    private static func hasEnded(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        while true {
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
                return info._sifields._sigchld.si_pid == pid
            }
            if errno != EINTR { return true }
        }
    }

    /// Kills what is left of the child's group, forgets the group, and reaps the child
    /// (waiting for it if it still runs): its wait status.
    private static func finish(_ pid: pid_t) -> Int32 {
        groups.withLock { running in
            kill(-pid, SIGKILL)
            running.remove(pid)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// At exit: SIGTERM to every child's group, SIGKILL after `killGrace` to those still
    /// running. Their deliveries stay pending in the outbox and are tried again at the next start.
    public static func stopAll() {
        spawnLock.withLock { $0 = true }
        let running = groups.withLock { running in
            for group in running { kill(-group, SIGTERM) }
            return running.count
        }
        guard running > 0 else { return }
        let graceEnd = Monotonic.milliseconds() + killGrace
        // Each child's own thread sees it end and kills the rest of its group.
        while Monotonic.milliseconds() < graceEnd, !groups.withLock({ $0.isEmpty }) { usleep(5_000) }
        groups.withLock { running in
            for group in running { kill(-group, SIGKILL) }
        }
    }

    /// The bytes for the child's standard input and how far they are written.
    private struct Input {
        var fd: Int32
        let bytes: [UInt8]
        var written = 0

        init(fd: Int32, bytes: [UInt8]) {
            self.fd = fd
            self.bytes = bytes
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if bytes.isEmpty { end() }
        }

        /// Writes what the pipe takes now; closes it when all is written (the child then sees
        /// end of input) or the child closed its end (EPIPE).
        mutating func feed() {
            guard fd >= 0 else { return }
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
                if n > 0 {
                    written += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else if n < 0 && errno == EAGAIN {
                    return
                } else {
                    break
                }
            }
            end()
        }

        mutating func end() {
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
        }
    }

    /// Held while pipes are made close-on-exec and while spawning, so a child spawned by
    /// another send never inherits this child's pipe ends (Glibc does not export `pipe2`).
    /// True once `stopAll` has begun.
    private static let spawnLock = Mutex(false)

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

    /// Reads what `fd` has (keeping up to `stderrLimit` bytes); false at end of file.
    private static func readAvailable(_ fd: Int32, into kept: inout [UInt8]) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 {
            kept += buffer[0..<min(n, max(0, stderrLimit - kept.count))]
            return true
        }
        return n < 0 && (errno == EINTR || errno == EAGAIN)
    }

    private static func hasData(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }
}
