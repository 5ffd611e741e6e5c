import AlertModel
import AlertPolicy
import AlertRules
import AlertSinks
import Platform
import Synchronization

/// Prints alerts as they come, in order, and hands each to the dispatcher when there is one.
/// Without a dispatcher, the caller writes the lines `appendLine` makes in batches of about
/// `batchBytes` (`replay`: its `ListingWriter` thread); with one, `consume` writes the lines
/// of the alerts that have come, then dispatches them together. Standard output is the listing
/// alone: dispatched alerts leave out the sinks that print there (`printing`), which would
/// repeat each line.
public struct AlertListing: Sendable {
    public let format: AlertOutputFormat
    public let dispatcher: AlertDelivery?
    /// The rule set's stdout sinks (see `printingSinks(of:)`).
    public var printing: Set<String> = []
    /// Alerts these silence are listed and marked; the dispatcher's policy stages, which read
    /// the same silences, send them nowhere (Docs/sinks.md#silences).
    public var silences = SilenceSet()

    public init(
        format: AlertOutputFormat, dispatcher: AlertDelivery?, printing: Set<String> = [],
        silences: SilenceSet = SilenceSet()
    ) {
        self.format = format
        self.dispatcher = dispatcher
        self.printing = printing
        self.silences = silences
    }

    /// The listing's line for `alert`: with `"silenced": "ID"` (json) or `(silenced: ID)` (text)
    /// when `silence` keeps it from the sinks.
    public static func line(for alert: Alert, format: AlertOutputFormat, silence: Silence?) -> String {
        var line: [UInt8] = []
        appendLine(for: alert, format: format, silence: silence, to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// Appends `line(for:format:silence:)`'s bytes to `out`, without the newline.
    public static func appendLine(for alert: Alert, format: AlertOutputFormat, silence: Silence?, to out: inout [UInt8])
    {
        StdoutSink.appendLine(for: alert, format: format, to: &out)
        guard let silence else { return }
        switch format {
        case .json:
            out.removeLast() // the object's closing brace
            out.append(contentsOf: #","silenced":"#.utf8)
            JSONString.append(silence.id, to: &out)
            out.append(UInt8(ascii: "}"))
        case .text:
            out.append(contentsOf: " (silenced: \(silence.id))".utf8)
        }
    }

    /// `ruleSet` with every rule printing on standard output, as `demo`'s help says for its
    /// rule files: a rule that names no stdout sink (a file, a webhook, `[]`) gets the
    /// built-in one too.
    public static func printingEveryAlert(_ ruleSet: RuleSet) -> RuleSet {
        var ruleSet = ruleSet
        let printing = AlertListing.printingSinks(of: ruleSet)
        var name = SinkDefinition.builtinStdout.name
        while ruleSet.sinks[name] != nil && !printing.contains(name) { name += "_" }
        for index in ruleSet.rules.indices where !ruleSet.rules[index].notify.contains(where: printing.contains) {
            ruleSet.rules[index].notify.append(name)
            if ruleSet.sinks[name] == nil {
                ruleSet.sinks[name] = SinkDefinition(name: name, kind: SinkDefinition.builtinStdout.kind)
            }
        }
        return ruleSet
    }

    /// The sinks of `ruleSet` that write to standard output: the built-in `stdout` and every
    /// sink of type `stdout`. Where a command lists the alerts on standard output (`replay`,
    /// `check --format`), they are left out of the alerts it dispatches.
    public static func printingSinks(of ruleSet: RuleSet) -> Set<String> {
        Set(ruleSet.sinks.compactMap { name, definition in definition.kind.printsToStandardOutput ? name : nil })
    }

    /// `alert` without the sinks in `printing`.
    public static func dispatched(_ alert: Alert, skipping printing: Set<String>) -> Alert {
        guard alert.notify.contains(where: printing.contains) else { return alert }
        var alert = alert
        alert.notify.removeAll(where: printing.contains)
        return alert
    }

    /// Appends `alert`'s listing line and its newline to `out`.
    public func appendLine(for alert: Alert, to out: inout [UInt8]) {
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

    /// Lists the alerts of `alerts` in order and dispatches them after their lines are written.
    /// What came while the ones before were being dispatched goes on together, `dispatchBatch`
    /// at a time, so a sink delivered directly takes many with one write when alerts come fast,
    /// and each alert goes at once when they come one by one. Returns how many deliveries failed.
    public func consume(_ alerts: AsyncStream<Alert>) async -> Int {
        let arrived = Arrived()
        let reader = Task {
            for await alert in alerts { arrived.add(alert) }
            arrived.finish()
        }
        var lines = Lines(self)
        var failures = 0
        while let taken = await arrived.takeAll() {
            for start in stride(from: 0, to: taken.count, by: Self.dispatchBatch) {
                let batch = taken[start..<min(start + Self.dispatchBatch, taken.count)]
                for alert in batch { lines.list(alert) }
                lines.flush()
                if let dispatcher {
                    failures += await dispatcher.dispatch(batch.map { Self.dispatched($0, skipping: printing) })
                }
            }
        }
        await reader.value
        return failures
    }

    /// Alerts handed to `dispatch` at most at once: about 80 KiB of JSON lines for a file sink.
    public static let dispatchBatch = 256

    /// Alerts that came from the stream and wait for the task that lists and dispatches them.
    final class Arrived: Sendable {
        private struct State {
            var alerts: [Alert] = []
            var finished = false
            var taker: CheckedContinuation<[Alert]?, Never>?
        }

        private let state = Mutex(State())

        func add(_ alert: Alert) {
            let taker = state.withLock { state -> CheckedContinuation<[Alert]?, Never>? in
                guard let taker = state.taker else {
                    state.alerts.append(alert)
                    return nil
                }
                state.taker = nil // it waits only when no alert does
                return taker
            }
            taker?.resume(returning: [alert])
        }

        func finish() {
            let taker = state.withLock { state -> CheckedContinuation<[Alert]?, Never>? in
                state.finished = true
                defer { state.taker = nil }
                return state.taker
            }
            taker?.resume(returning: nil)
        }

        /// Every alert that came since the last call, in order, waiting for one if none did;
        /// nil once the stream has ended and all were taken.
        func takeAll() async -> [Alert]? {
            await withCheckedContinuation { (taker: CheckedContinuation<[Alert]?, Never>) in
                let ready = state.withLock { state -> [Alert]?? in
                    if !state.alerts.isEmpty {
                        defer { state.alerts = [] }
                        return .some(state.alerts)
                    }
                    if state.finished { return .some(nil) }
                    state.taker = taker
                    return .none
                }
                if let ready { taker.resume(returning: ready) }
            }
        }
    }

    /// Lines written at once when no dispatcher waits for them.
    public static let batchBytes = 65_536
}
