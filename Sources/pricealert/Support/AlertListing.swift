import AlertCore
import AlertSinks

/// Prints alerts as they come, in order, and hands each to the dispatcher when there is one.
/// Without a dispatcher, lines are written in batches of about 64 KiB; with one, each line is
/// written before its alert is dispatched, so a `stdout` sink's line follows the listing's.
struct AlertListing: Sendable {
    let format: AlertOutputFormat
    let dispatcher: AlertDelivery?

    /// Returns how many deliveries failed.
    func consume(_ alerts: AsyncStream<Alert>) async -> Int {
        var failures = 0
        var batch = ""
        for await alert in alerts {
            batch += StdoutSink.line(for: alert, format: format)
            if let dispatcher {
                StandardOutput.shared.writeLine(batch)
                batch = ""
                failures += await dispatcher.dispatch(alert)
            } else if batch.utf8.count >= 65_536 {
                StandardOutput.shared.writeLine(batch)
                batch = ""
            } else {
                batch += "\n"
            }
        }
        if !batch.isEmpty {
            if batch.hasSuffix("\n") { batch.removeLast() }
            StandardOutput.shared.writeLine(batch)
        }
        return failures
    }
}
