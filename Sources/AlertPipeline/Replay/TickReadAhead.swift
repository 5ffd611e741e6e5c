import AlertFeeds
import AlertModel

/// Reads and parses a tick file (`TickFileReader`, `-` for standard input) on a thread of its
/// own, ahead of the thread that evaluates the ticks: the first stage of `replay`'s pipeline.
/// It starts at `init`, so the file is read while the rules still load.
///
/// The caller learns whether the file could be opened (`opened()`), then receives its non-blank
/// lines in order (`next()`), in batches of at most `batchLines` (a batch also ends where a
/// `read(2)` ended, so lines arriving on a pipe are not held back), each line with its number and its
/// parse result exactly as `TickFileReader.forEachLine` gives them; at most `capacity` batches
/// are read ahead. A read error ends the batches: the last one carries it after the lines read
/// before it.
public final class TickReadAhead: Sendable {
    /// Lines of the file, in order, and the read error that ended it, if one did.
    public struct Batch: Sendable {
        public var lines: [(number: Int, tick: Result<Tick, TickLineError>)] = []
        /// Reading failed after `lines`; no batch follows.
        public var failure: InputFileError?
    }

    private let batches: HandOff<Batch>

    /// Starts reading `path`. `capacity` × `batchLines` bounds the lines held ahead.
    public init(path: String, batchLines: Int = 4_096, capacity: Int = 64) {
        let batches = HandOff<Batch>(capacity: capacity)
        self.batches = batches
        _ = StageThread {
            Self.read(path, batchLines: batchLines, into: batches)
        }
    }

    /// Waits until the file is open, or throws why it cannot be. Called once, before `next()`.
    public func opened() throws(InputFileError) {
        if let failure = batches.receive()?.failure { throw failure }
    }

    /// The next batch, waiting for it; nil after the last.
    public func next() -> Batch? {
        batches.receive()
    }

    /// The caller reads no more: the reading thread stops at its next batch.
    public func stop() {
        batches.close()
    }

    private struct Stopped: Error {}

    private static func read(_ path: String, batchLines: Int, into batches: HandOff<Batch>) {
        // The first batch says whether the file opened (see `opened()`).
        let reader: TickFileReader
        do {
            reader = try TickFileReader(path: path)
        } catch {
            batches.send(Batch(failure: error))
            batches.finish()
            return
        }
        guard batches.send(Batch()) else { return }
        var batch = Batch()
        batch.lines.reserveCapacity(batchLines)
        do {
            func pass() throws {
                guard batches.send(batch) else { throw Stopped() }
                batch = Batch()
                batch.lines.reserveCapacity(batchLines)
            }
            // A batch goes on when full, and with what one read gave: lines written to a pipe
            // by a program still running are evaluated as they come.
            try reader.forEachLine(
                { number, tick in
                    batch.lines.append((number, tick))
                    if batch.lines.count == batchLines { try pass() }
                },
                afterRead: {
                    if !batch.lines.isEmpty { try pass() }
                })
        } catch let error as InputFileError {
            batch.failure = error
        } catch {
            return // Stopped: nobody reads
        }
        if !batch.lines.isEmpty || batch.failure != nil { batches.send(batch) }
        batches.finish()
    }
}
