import AlertModel
import AlertPolicy
import Logging

/// Fans each alert out to the sinks its rule names (`alert.notify`), in that order; or one
/// delivery (an event or a digest) to the sinks named for it.
///
/// A failing sink never stops the others, and never reaches back into the engine: the failure
/// is logged (label `pricealert.dispatch`, naming the sink and the reason) and counted.
/// An actor so counts can be read from anywhere; alerts keep their order as long as one task
/// awaits each `dispatch` before the next (as the replay loop does). Alerts dispatched together
/// (`dispatch(_ alerts:)`) reach each sink as one batch (`Sink.send(_ deliveries:)`), so a file
/// sink writes them with one `write(2)`.
public actor Dispatcher {
    /// Deliveries per sink over the run.
    public struct Counts: Sendable, Equatable {
        public var delivered = 0
        public var failed = 0

        public init(delivered: Int = 0, failed: Int = 0) {
            self.delivered = delivered
            self.failed = failed
        }
    }

    /// Returned for a name in `notify` that has no sink (validation should have caught it).
    public static let unknownSink = SinkResult.permanent(reason: "unknown sink")

    private let sinks: [String: any Sink]
    private let logger: Logger
    /// Counts by sink name, including unknown names.
    public private(set) var counts: [String: Counts] = [:]

    public init(sinks: [String: any Sink], logger: Logger = Logger(label: "pricealert.dispatch")) {
        self.sinks = sinks
        self.logger = logger
    }

    /// Sends `alert` to each sink in `alert.notify`, one after the other, and returns each
    /// sink's result in that order.
    @discardableResult
    public func dispatch(_ alert: Alert) async -> [(sink: String, result: SinkResult)] {
        await dispatch(.event(alert), to: alert.notify)
    }

    /// Sends `delivery` to each sink in `sinks`, one after the other, and returns each sink's
    /// result in that order. `urgent` changes nothing here (every delivery goes at once); it is
    /// taken so callers treat both dispatchers alike.
    @discardableResult
    public func dispatch(
        _ delivery: Delivery, to sinks: [String], urgent: Bool = false
    ) async
        -> [(sink: String, result: SinkResult)]
    {
        var results: [(sink: String, result: SinkResult)] = []
        for name in sinks {
            let result = await self.sinks[name]?.send(delivery) ?? Self.unknownSink
            record(result, of: delivery, sink: name)
            results.append((name, result))
        }
        return results
    }

    /// Sends each of `alerts` to the sinks in its `notify` but those in `skipping`: each sink
    /// is handed the events meant for it at once, in `alerts` order (the sinks one after the
    /// other, in the order they are first named). Returns how many deliveries failed; each
    /// failure is logged and counted as `dispatch(_ alert:)` does.
    @discardableResult
    public func dispatch(_ alerts: [Alert], skipping: Set<String> = []) async -> Int {
        var order: [String] = []
        var batches: [String: [Delivery]] = [:]
        for alert in alerts {
            for name in alert.notify where skipping.isEmpty || !skipping.contains(name) {
                if batches[name]?.append(.event(alert)) == nil {
                    order.append(name)
                    batches[name] = [.event(alert)]
                }
            }
        }
        var failed = 0
        for name in order {
            let deliveries = batches.removeValue(forKey: name) ?? []
            let results =
                if let sink = sinks[name] {
                    await sink.send(deliveries)
                } else {
                    Array(repeating: Self.unknownSink, count: deliveries.count)
                }
            var delivered = 0
            for (delivery, result) in zip(deliveries, results) {
                if result.failureReason == nil {
                    delivered += 1
                } else {
                    record(result, of: delivery, sink: name)
                    failed += 1
                }
            }
            counts[name, default: Counts()].delivered += delivered
            DeliveryMetric.count(sink: name, .delivered, by: delivered)
        }
        return failed
    }

    /// Counts `result`, and logs it when it is a failure.
    private func record(_ result: SinkResult, of delivery: Delivery, sink name: String) {
        if let reason = result.failureReason {
            counts[name, default: Counts()].failed += 1
            logger.error(
                "sink '\(name)' failed to deliver \(delivery.id): \(reason)",
                metadata: [
                    "sink": "\(name)", "alert": "\(delivery.id)",
                    "retryable": "\(result.isRetryable)"
                ])
        } else {
            counts[name, default: Counts()].delivered += 1
        }
        DeliveryMetric.count(sink: name, result.failureReason == nil ? .delivered : .failed)
    }
}

extension SinkResult {
    var isRetryable: Bool {
        if case .retry = self { return true }
        return false
    }
}
