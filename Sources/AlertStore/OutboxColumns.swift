import AlertModel

/// How a delivery and an alert's threshold are written in an outbox row, the same in SQLite's
/// `Outbox` and PostgreSQL's `PostgresOutbox` (and their policy journals), so a row moved by
/// `store copy` reads back as it was written.
public enum OutboxColumns {
    /// A delivery's alert ids, one a line (the `alerts` column).
    public static func alertList(_ delivery: Delivery) -> String {
        delivery.events.map(\.id).joined(separator: "\n")
    }

    /// The `alerts` column read back.
    public static func split(_ list: String) -> [String] {
        list.split(separator: "\n").map(String.init)
    }

    public static func isDigest(_ delivery: Delivery) -> Bool {
        if case .digest = delivery { return true }
        return false
    }

    /// An alert's threshold as `threshold_low`, `threshold_high` (no threshold: 0 and nil, with
    /// `threshold_null` set).
    public static func threshold(_ threshold: Threshold) -> (Double, Double?) {
        switch threshold {
        case .value(let x): return (x, nil)
        case .range(let low, let high): return (low, high)
        case .none: return (0, nil)
        }
    }
}
