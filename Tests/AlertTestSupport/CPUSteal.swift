import Foundation

/// CPU time from /proc/stat's `cpu` line, for benchmarks: steal is time the hypervisor gave this
/// VM's CPUs to someone else; a figure (a tail latency above all) is only the program's own
/// while it stays near 0.
public struct CPUSteal: Sendable {
    /// (all, steal) in clock ticks when this was made.
    private let start: (all: Int, steal: Int)

    public init() {
        start = Self.times()
    }

    /// The steal since this was made, as a percentage of all CPU time (`12%`), or `unknown`.
    public var since: String {
        let now = Self.times()
        let all = now.all - start.all
        return all > 0 ? String(format: "%.0f%%", 100 * Double(now.steal - start.steal) / Double(all)) : "unknown"
    }

    private static func times() -> (all: Int, steal: Int) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return (0, 0) }
        let fields = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        return (fields.prefix(8).reduce(0, +), fields.count > 7 ? fields[7] : 0)
    }
}
