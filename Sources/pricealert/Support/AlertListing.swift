import AlertCore
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks

/// Prints alerts as they come, in order, and hands each to the dispatcher when there is one.
/// Without a dispatcher, lines are written in batches of about 64 KiB; with one, each line is
/// written before its alert is dispatched. Standard output is the listing alone: dispatched
/// alerts leave out the sinks that print there (`printing`), which would repeat each line.
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
        let line = StdoutSink.line(for: alert, format: format)
        guard let silence else { return line }
        switch format {
        case .json: return String(line.dropLast()) + ",\"silenced\":" + JSONString.quote(silence.id) + "}"
        case .text: return line + " (silenced: \(silence.id))"
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

    /// Returns how many deliveries failed.
    func consume(_ alerts: AsyncStream<Alert>) async -> Int {
        var failures = 0
        var batch = ""
        for await alert in alerts {
            let silence = silences.silence(for: alert)
            batch += Self.line(for: alert, format: format, silence: silence)
            if let dispatcher {
                StandardOutput.shared.writeLine(batch)
                batch = ""
                failures += await dispatcher.dispatch(Self.dispatched(alert, skipping: printing))
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
