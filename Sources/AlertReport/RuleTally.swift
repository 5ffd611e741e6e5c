import AlertModel

/// The three kinds of events a rule sends (Docs/rules.md#the-alert-event).
enum ReportKind: Int, CaseIterable {
    case alert, reminder, resolved

    var name: String {
        switch self {
        case .alert: "alert"
        case .reminder: "reminder"
        case .resolved: "resolved"
        }
    }
}

/// Events per kind: alerts, reminders, resolved.
struct KindCounts: Equatable {
    private var counts = [0, 0, 0]

    subscript(kind: ReportKind) -> Int { counts[kind.rawValue] }
    var total: Int { counts[0] + counts[1] + counts[2] }

    mutating func add(_ kind: ReportKind) { counts[kind.rawValue] += 1 }
    mutating func add(_ other: KindCounts) { for i in counts.indices { counts[i] += other.counts[i] } }
}

/// What one rule would have sent: counts by kind, the first and last event, counts per UTC day.
struct RuleTally {
    let id: String
    /// Position in the rule files, to order rules with equal counts as the files do.
    let order: Int
    var counts = KindCounts()
    var first: Int64?
    var last: Int64?
    /// Day number (days since 1970-01-01, UTC) to counts; at most `dayLimit` days are kept.
    var days: [Int64: KindCounts] = [:]
    /// Events on days past `dayLimit` distinct days: in the totals, not in `days`.
    var eventsOnUnkeptDays = 0

    init(id: String, order: Int) {
        self.id = id
        self.order = order
    }

    mutating func add(kind: ReportKind, time: Int64, dayLimit: Int) {
        counts.add(kind)
        if first.map({ time < $0 }) ?? true { first = time }
        if last.map({ time > $0 }) ?? true { last = time }
        let day = floorDivMod(time, 86_400_000).0
        if days[day] != nil || days.count < dayLimit {
            days[day, default: KindCounts()].add(kind)
        } else {
            eventsOnUnkeptDays += 1
        }
    }

    /// The day with the most events (the earliest of equals).
    var busiestDay: (day: Int64, events: Int)? {
        days.map { ($0.key, $0.value.total) }.min { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
    }
}
