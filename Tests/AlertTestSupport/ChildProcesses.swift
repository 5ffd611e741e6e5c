import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Looks at processes through /proc, for tests that check what a notifier left running.
public enum ChildProcesses {
    /// Whether `pid` is a live process (gone, or a zombie nobody reaped yet, counts as not).
    public static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    /// Waits up to `timeout` for `pid` to be gone and tells whether it is; kills it if not, so
    /// a failing test leaves nothing behind.
    public static func waitUntilGone(_ pid: Int32, timeout: Duration = .seconds(30)) async throws -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while isRunning(pid), clock.now < end { try await Task.sleep(for: .milliseconds(20)) }
        let gone = !isRunning(pid)
        if !gone { kill(pid, SIGKILL) }
        return gone
    }

    /// Live processes whose command line mentions `text`.
    public static func mentioning(_ text: String) -> [Int32] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return ids.compactMap(Int32.init).filter { pid in
            guard let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: line, as: UTF8.self).contains(text) && isRunning(pid)
        }
    }
}
