import AlertFeeds
import Platform

extension Evaluator {
    /// `--history FILE` (Docs/rules.md#seeded-history): the tick lines of `reader` (reading
    /// `path`) are seeded before any tick is evaluated. A line that is not a tick, and a tick the
    /// engine drops, is reported on standard error at FILE:LINE and counted like a bad `--ticks`
    /// line. Returns the number of lines read; rethrows what reading the file throws.
    public mutating func seedHistory(from reader: borrowing TickFileReader, path: String) throws -> Int {
        var read = 0
        try reader.forEachLine { line, parsed in
            read += 1
            let drop: Drop? =
                switch parsed {
                case .failure(let error): reject(error.message, at: .line(file: path, line: line))
                case .success(let tick): seed(tick, at: .line(file: path, line: line))
                }
            if let drop { StandardError.write(drop.description) }
        }
        return read
    }
}
