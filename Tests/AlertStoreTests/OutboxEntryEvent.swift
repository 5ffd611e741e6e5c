import AlertModel
import AlertPolicy

/// The event of an event row, for tests that enqueue single alerts.
extension OutboxEntry {
    var alert: Alert { delivery.events[0] }
    var alertID: String { deliveryID }
    /// The event's JSON, as a sink would send it.
    var payload: String { AlertFormat.json(alert) }
}
