public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started by a test and watched without holding a thread of Swift's
/// cooperative pool, which has one thread per core: its standard output and error are read on
/// threads of their own, its end arrives through `Process.terminationHandler` or a thread
/// waiting for the exit (whichever comes first), and every wait
/// (for a line, for the end) suspends on a continuation those events resume, with a timeout.
/// So any number of tests can run programs side by side on two cores without starving the
/// in-process servers those programs talk to.
///
/// Foundation's `Process` with reader threads rather than swift-subprocess: no new dependency
/// for the tests, and the same object serves line waits, signals and the final result.
public final class ObservedProcess: Sendable {
    public enum Stream: Sendable { case stdout, stderr }

    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public var waitingFor: String
        public var command: String
        public var description: String { "\(command): \(waitingFor) did not come in time" }

        public init(waitingFor: String, command: String) {
            self.waitingFor = waitingFor
            self.command = command
        }
    }

    public struct EndedWithout: Error, CustomStringConvertible {
        public var waitingFor: String
        public var output: String
        public var description: String { "output closed without \(waitingFor); it wrote:\n\(output)" }
    }

    /// The Foundation process (for its id and `isRunning`). Its `terminationReason` may not be
    /// set yet when a wait here has returned: `endedBySignal` is.
    public let process: Process
    /// The program and its arguments, for messages.
    /// The command line as errors show it: a URL's password (a test database's) is replaced
    /// by `***`, so test output never carries it.
    public let command: String

    public static func redacted(_ line: String) -> String {
        line.replacing(#/(://[^:/@\s]+:)[^@\s]+@/#) { "\($0.output.1)***@" }
    }

    private enum Verdict { case waiting, met, never }

    private struct Waiter {
        var check: @Sendable (State) -> Verdict
        var continuation: CheckedContinuation<Void, any Error>
        var what: String
    }

    private struct State {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var stdoutClosed = false
        var stderrClosed = false
        var status: Int32?
        /// Ended by a signal (`status` is then the signal's number).
        var signaled = false
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0

        /// The process has ended and both output streams are at end of file.
        var ended: Bool { status != nil && stdoutClosed && stderrClosed }
        func bytes(_ stream: Stream) -> [UInt8] { stream == .stdout ? stdout : stderr }
        func closed(_ stream: Stream) -> Bool { stream == .stdout ? stdoutClosed : stderrClosed }
    }

    /// Shared with the reader threads and the termination handler, which outlive no event.
    private final class Shared: Sendable {
        let state = Mutex(State())
        /// Set by the first of the two watchers of the end (`ended`).
        let endSeen = Atomic(false)
    }

    private let shared = Shared()

    /// Starts `executable` with `arguments` and returns at once. `environment` is the child's
    /// whole environment; `input` is written to its standard input, which is then closed (none:
    /// /dev/null). `whenEnded` runs once the process has ended.
    public init(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        input: [UInt8]? = nil, whenEnded: (@Sendable () -> Void)? = nil
    ) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        command = Self.redacted(([executable.lastPathComponent] + arguments).joined(separator: " "))
        if let directory { process.currentDirectoryURL = directory }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = input.map { _ in Pipe() }
        process.standardInput = stdin ?? FileHandle.nullDevice
        process.terminationHandler = { [shared] process in
            ObservedProcess.ended(
                shared, status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                whenEnded)
        }
        try process.run()
        // Foundation sees the end of a process when a socket the child inherited closes, and a
        // child started beside it at that moment (a test's PostgreSQL server, another test's
        // program) may inherit that socket too and hold it open for minutes. So a thread of
        // its own also waits for the exit itself, leaving the child for Foundation to reap
        // (WNOWAIT); the first of the two to see the end records it.
        let pid = process.processIdentifier
        Thread { [shared] in
            var info = siginfo_t()
            var rc: Int32
            repeat { rc = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) } while rc == -1 && errno == EINTR
            // Reaped already (Foundation saw the end first): its handler records it.
            guard rc == 0 else { return }
            // The exit code, or the signal that ended it (as `Process.terminationStatus` gives).
            let signaled = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED
            ObservedProcess.ended(shared, status: info._sifields._sigchld.si_status, signaled: signaled, whenEnded)
        }.start()
        for (pipe, stream) in [(out, Stream.stdout), (err, .stderr)] {
            let handle = pipe.fileHandleForReading
            Thread { [shared] in ObservedProcess.readToEnd(handle, stream, into: shared) }.start()
        }
        if let stdin, let input {
            let handle = stdin.fileHandleForWriting
            Thread {
                ObservedProcess.writeAll(input, to: handle.fileDescriptor)
                try? handle.close()
            }.start()
        }
    }

    /// Runs the program to its end and returns what it printed (see `wait`).
    public static func run(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        input: [UInt8]? = nil, timeout: TimeInterval = 60
    ) async throws -> Result {
        try await ObservedProcess(executable, arguments, in: directory, environment: environment, input: input)
            .wait(timeout: timeout)
    }

    public var pid: Int32 { process.processIdentifier }
    /// Whether the process has ended and a signal ended it; nil while it runs. (Read this, not
    /// `process.terminationReason`: Foundation may see the end later, see `init`.)
    public var endedBySignal: Bool? {
        shared.state.withLock { $0.status == nil ? nil : $0.signaled }
    }
    public var stdout: String { shared.state.withLock { String(decoding: $0.stdout, as: UTF8.self) } }
    public var stderr: String { shared.state.withLock { String(decoding: $0.stderr, as: UTF8.self) } }

    /// The first whole line of `stream` containing `text` (the last line counts as whole once
    /// the stream has ended), waiting up to `timeout` seconds for it.
    public func line(_ stream: Stream, containing text: String, timeout: TimeInterval) async throws -> String {
        let needle = Array(text.utf8)
        try await wait(for: "a line of \(command)'s \(stream) with '\(text)'", timeout: timeout) { state in
            let closed = state.closed(stream)
            if Self.line(in: state.bytes(stream), containing: needle, final: closed) != nil { return .met }
            return closed ? .never : .waiting
        }
        let (bytes, closed) = shared.state.withLock { ($0.bytes(stream), $0.closed(stream)) }
        return String(decoding: Self.line(in: bytes, containing: needle, final: closed) ?? [], as: UTF8.self)
    }

    /// Waits up to `timeout` seconds until `stream` holds `text` at least `count` times.
    public func occurrences(_ stream: Stream, of text: String, atLeast count: Int, timeout: TimeInterval) async throws {
        try await wait(for: "\(count) times '\(text)' in \(command)'s \(stream)", timeout: timeout) { state in
            if String(decoding: state.bytes(stream), as: UTF8.self).components(separatedBy: text).count - 1 >= count {
                return .met
            }
            return state.closed(stream) ? .never : .waiting
        }
    }

    /// Waits up to `timeout` seconds for the process to end and both output streams to close;
    /// on timeout kills it (SIGKILL: a hung program may ignore SIGTERM) and throws `TimedOut`.
    public func wait(timeout: TimeInterval) async throws -> Result {
        do {
            try await wait(for: "the end of the process", timeout: timeout) { $0.ended ? .met : .waiting }
        } catch let error as TimedOut {
            kill(pid, SIGKILL)
            try? await wait(for: "the end after SIGKILL", timeout: 60) { $0.ended ? .met : .waiting }
            throw error
        }
        return shared.state.withLock { state in
            Result(
                status: state.status ?? -1, stdout: String(decoding: state.stdout, as: UTF8.self),
                stderr: String(decoding: state.stderr, as: UTF8.self))
        }
    }

    /// Sends `signal` and waits (up to `timeout` seconds) for the exit status.
    public func stop(signal: Int32, timeout: TimeInterval = 30) async throws -> Int32 {
        kill(pid, signal)
        return try await wait(timeout: timeout).status
    }

    /// Suspends until `check` says the state has what is wanted (or never will), every time
    /// output arrives or the process ends; at most `timeout` seconds.
    private func wait(
        for what: String, timeout: TimeInterval, _ check: @escaping @Sendable (State) -> Verdict
    ) async throws {
        let id = shared.state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task { [weak self] in
            try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            self?.resolve(id, .failure(TimedOut(waitingFor: what, command: self?.command ?? "")))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                shared.state.withLock { $0.waiters[id] = Waiter(check: check, continuation: continuation, what: what) }
                Self.update(shared) { _ in }
                if Task.isCancelled { resolve(id, .failure(CancellationError())) }
            }
        } onCancel: {
            resolve(id, .failure(CancellationError()))
        }
    }

    private func resolve(_ id: Int, _ result: Swift.Result<Void, any Error>) {
        shared.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(with: result)
    }

    /// Applies `change`, then resumes every waiter whose wait is over.
    private static func update(_ shared: Shared, _ change: (inout State) -> Void) {
        let done: [(Waiter, Verdict)] = shared.state.withLock { state in
            change(&state)
            var done: [(Waiter, Verdict)] = []
            for (id, waiter) in state.waiters {
                let verdict = waiter.check(state)
                if verdict != .waiting {
                    state.waiters[id] = nil
                    done.append((waiter, verdict))
                }
            }
            return done
        }
        guard !done.isEmpty else { return }
        let output = shared.state.withLock { String(decoding: $0.stdout + $0.stderr, as: UTF8.self) }
        for (waiter, verdict) in done {
            if verdict == .met {
                waiter.continuation.resume()
            } else {
                waiter.continuation.resume(throwing: EndedWithout(waitingFor: waiter.what, output: output))
            }
        }
    }

    /// Records the end of the process, once, whichever watcher saw it first.
    private static func ended(
        _ shared: Shared, status: Int32, signaled: Bool, _ whenEnded: (@Sendable () -> Void)?
    ) {
        guard !shared.endSeen.exchange(true, ordering: .acquiringAndReleasing) else { return }
        whenEnded?()
        update(shared) { state in
            state.status = status
            state.signaled = signaled
        }
    }

    /// Reads on the calling (own) thread until end of file, or until the process has ended and
    /// all it wrote has been read. The second matters when tests start processes side by side:
    /// a child started at the same moment (another test's program, its PostgreSQL server) may
    /// inherit this pipe's write end and hold it open long after this process has ended. Once
    /// the process has ended, everything it wrote is already in the pipe, so a pipe with nothing
    /// left to read is at its end for this process.
    private static func readToEnd(_ handle: FileHandle, _ stream: Stream, into shared: Shared) {
        let fd = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let exited = shared.state.withLock { $0.status != nil }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // Once the process has ended, only what is already in the pipe is waited for.
            let polled = poll(&ready, 1, exited ? 0 : 200)
            if polled < 0, errno == EINTR { continue }
            if polled == 0 {
                if exited { break }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            update(shared) { state in
                if stream == .stdout { state.stdout += buffer[..<count] } else { state.stderr += buffer[..<count] }
            }
        }
        update(shared) { state in
            if stream == .stdout { state.stdoutClosed = true } else { state.stderrClosed = true }
        }
    }

    /// A child that exits before reading all its input must fail a write, not end the test run:
    /// SIGPIPE's default action (ending the process) is replaced by ignoring it, as the program's
    /// `ProcessSetUp.atStart()` does; a disposition a test set on purpose is left alone.
    private static let brokenPipeIsAnError: Void = {
        var current = sigaction()
        sigaction(SIGPIPE, nil, &current)
        if current.__sigaction_handler.sa_handler == nil { _ = signal(SIGPIPE, SIG_IGN) }
    }()

    private static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        brokenPipeIsAnError
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            written += count
        }
    }

    /// The first line of `bytes` containing `needle`; the unterminated last line only if `final`.
    private static func line(in bytes: [UInt8], containing needle: [UInt8], final: Bool) -> [UInt8]? {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
            if end == nil, !final { return nil }
            let line = Array(bytes[start..<(end ?? bytes.count)])
            if needle.isEmpty || line.indices.contains(where: { line[$0...].starts(with: needle) }) { return line }
            start = (end ?? bytes.count) + 1
        }
        return nil
    }
}
