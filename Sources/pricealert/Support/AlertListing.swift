import AlertCore
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks

/// Prints alerts as they come, in order, and hands each to the dispatcher when there is one.
/// Without a dispatcher, `Lines` lists them in the caller's own loop, in batches of about
/// 64 KiB; with one, `consume` writes the lines of up to `dispatchBatch` alerts, then dispatches
/// those alerts together. Standard output is the listing alone: dispatched alerts leave out the
/// sinks that print there (`printing`), which would repeat each line.
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

    /// Lists alerts where they are made, without a task or a stream between: each line goes
    /// into one reusable batch, written to standard output when it reaches `batchBytes` and on
    /// `flush()`. It dispatches nothing: a listing with a dispatcher goes through `consume`.
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

    /// Lists the alerts of `alerts` in order and dispatches them after their lines are written,
    /// `dispatchBatch` at a time (and what is left when the stream ends), so a sink delivered
    /// directly takes many with one write. Returns how many deliveries failed.
    func consume(_ alerts: AsyncStream<Alert>) async -> Int {
        var lines = Lines(self)
        var batch: [Alert] = []
        batch.reserveCapacity(Self.dispatchBatch)
        var failures = 0
        func handOn() async {
            lines.flush()
            if let dispatcher, !batch.isEmpty { failures += await dispatcher.dispatch(batch) }
            batch.removeAll(keepingCapacity: true)
        }
        for await alert in alerts {
            lines.list(alert)
            batch.append(Self.dispatched(alert, skipping: printing))
            if batch.count >= Self.dispatchBatch { await handOn() }
        }
        await handOn()
        return failures
    }

    /// Alerts `consume` dispatches at once: about 80 KiB of JSON lines for a file sink.
    static let dispatchBatch = 256

    /// Lines written at once when no dispatcher waits for them.
    static let batchBytes = 65_536
}
