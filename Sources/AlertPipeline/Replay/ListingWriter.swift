import AlertModel

/// Encodes alerts into lines and writes them on a thread of its own, behind the thread that
/// evaluates the ticks: the last stage of `replay`'s pipeline.
///
/// Every alert sent before `finish()` is encoded by `encode` (which appends its line and
/// newline) and written by `write`, in the order sent; lines are gathered into writes of about
/// `writeBytes`, and written as soon as no batch waits, so alerts made from a pipe that is still
/// being written reach the reader as they come. At most `capacity` batches of alerts wait to be
/// encoded: a sender further ahead waits. `finish()` returns once the last line has been written.
public final class ListingWriter: Sendable {
    private let batches: HandOff<[Alert]>
    private let thread: StageThread

    public init(
        capacity: Int = 64, writeBytes: Int = 65_536,
        encode: @escaping @Sendable (Alert, inout [UInt8]) -> Void,
        write: @escaping @Sendable ([UInt8]) -> Void
    ) {
        let batches = HandOff<[Alert]>(capacity: capacity)
        self.batches = batches
        thread = StageThread {
            var lines: [UInt8] = []
            lines.reserveCapacity(writeBytes + 4_096)
            while let alerts = batches.receive() {
                for alert in alerts {
                    encode(alert, &lines)
                    if lines.count >= writeBytes {
                        write(lines)
                        lines.removeAll(keepingCapacity: true)
                    }
                }
                if !lines.isEmpty, !batches.hasWaiting {
                    write(lines)
                    lines.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Queues `alerts` to be listed after those sent before.
    public func send(_ alerts: [Alert]) {
        guard !alerts.isEmpty else { return }
        batches.send(alerts)
    }

    /// Waits until every alert sent has been written.
    public func finish() {
        batches.finish()
        thread.join()
    }
}
