import AlertCore
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks

/// Prints alerts as they come, in order, and hands each to the dispatcher when there is one.
/// Without a dispatcher, the caller writes the lines `appendLine` makes in batches of about
/// `batchBytes` (`replay`: its `ListingWriter` thread); with one, `consume` writes each line
/// before its alert is dispatched. Standard output
/// is the listing alone: dispatched alerts leave out the sinks that print there (`printing`),
/// which would repeat each line.
struct AlertListing: Sendable {
    let format: AlertOutputFormat
    let dispatcher: AlertDelivery?
    /// The rule set's stdout sinks (see `printingSinks(of:)`).
    var printing: Set<String> = []
    /// Alerts these silence are listed and marked; the dispatcher's policy stages, which read
    /// the same silences, send them nowhere (Docs/sinks.md#silences).
    var silences = SilenceSet()

    /// The listing's line for `alert`: with `"silenced": "ID"` (json) or `(silenced: ID)` (text)
    /// when `silence` keeps it from the sinks.
    static func line(for alert: Alert, format: AlertOutputFormat, silence: Silence?) -> String {
        var line: [UInt8] = []
        appendLine(for: alert, format: format, silence: silence, to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// Appends `line(for:format:silence:)`'s bytes to `out`, without the newline.
    static func appendLine(for alert: Alert, format: AlertOutputFormat, silence: Silence?, to out: inout [UInt8]) {
        StdoutSink.appendLine(for: alert, format: format, to: &out)
        guard let silence else { return }
        switch format {
        case .json:
            out.removeLast()  // the object's closing brace
            out.append(contentsOf: #","silenced":"#.utf8)
            JSONString.append(silence.id, to: &out)
            out.append(UInt8(ascii: "}"))
        case .text:
            out.append(contentsOf: " (silenced: \(silence.id))".utf8)
        }
    }

    /// The sinks of `ruleSet` that write to standard output: the built-in `stdout` and every
    /// sink of type `stdout`. Where a command lists the alerts on standard output (`replay`,
    /// `check --format`), they are left out of the alerts it dispatches.
    static func printingSinks(of ruleSet: RuleSet) -> Set<String> {
        Set(ruleSet.sinks.compactMap { name, definition in
            if case .stdout = definition.kind { return name }
            return nil
        })
    }

    /// `alert` without the sinks in `printing`.
    static func dispatched(_ alert: Alert, skipping printing: Set<String>) -> Alert {
        guard alert.notify.contains(where: printing.contains) else { return alert }
        var alert = alert
        alert.notify.removeAll(where: printing.contains)
        return alert
    }

    /// Appends `alert`'s listing line and its newline to `out`.
    func appendLine(for alert: Alert, to out: inout [UInt8]) {
        Self.appendLine(for: alert, format: format, silence: silences.silence(for: alert), to: &out)
        out.append(UInt8(ascii: "\n"))
    }

    /// Lists alerts into one reusable batch, written to standard output when it reaches
    /// `batchBytes` and on `flush()`. It dispatches nothing (`consume` does).
    struct Lines {
        let listing: AlertListing
        private var batch: [UInt8] = []

        init(_ listing: AlertListing) {
            self.listing = listing
            batch.reserveCapacity(AlertListing.batchBytes + 4_096)
        }

        mutating func list(_ alert: Alert) {
            listing.appendLine(for: alert, to: &batch)
            if batch.count >= AlertListing.batchBytes { flush() }
        }

        /// Writes the lines not written yet.
        mutating func flush() {
            guard !batch.isEmpty else { return }
            StandardOutput.shared.write(lines: batch)
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Lists the alerts of `alerts` in order and dispatches each after its line is written.
    /// Returns how many deliveries failed.
    func consume(_ alerts: AsyncStream<Alert>) async -> Int {
        var lines = Lines(self)
        var failures = 0
        for await alert in alerts {
            lines.list(alert)
            lines.flush()
            if let dispatcher { failures += await dispatcher.dispatch(Self.dispatched(alert, skipping: printing)) }
        }
        return failures
    }

    /// Lines written at once when no dispatcher waits for them.
    static let batchBytes = 65_536
}
