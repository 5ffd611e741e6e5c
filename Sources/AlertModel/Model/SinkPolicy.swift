/// How a sink is spared a flood (Docs/sinks.md#notification-policy): quiet hours, groups, a rate
/// and a fallback sink, as the rule file's sink keys say. Plain values; the stages that apply
/// them are in `AlertPolicy`.
public struct SinkPolicy: Sendable, Equatable {
    /// `quiet`: the windows in which events are held or dropped; empty when none.
    public var quiet: [QuietWindowSpec]
    /// `quietAction`.
    public var quietAction: QuietAction
    /// `group`; nil when events go out one by one.
    public var group: GroupSpec?
    /// `rate`; nil when the rule file leaves it to the preset's default (`AlertPolicy.PresetRates`).
    public var rate: RateSpec?
    /// `fallback`: the sink that gets this sink's dead letters.
    public var fallback: String?

    public init(
        quiet: [QuietWindowSpec] = [], quietAction: QuietAction = .hold, group: GroupSpec? = nil,
        rate: RateSpec? = nil, fallback: String? = nil
    ) {
        self.quiet = quiet
        self.quietAction = quietAction
        self.group = group
        self.rate = rate
        self.fallback = fallback
    }
}

/// One element of `quiet`: on `days`, from `from` to `to` (minutes after local midnight) in the
/// IANA zone `zone`. `from > to` wraps past midnight; `from == to` is a whole day.
public struct QuietWindowSpec: Sendable, Equatable {
    /// The days a window starts on; all seven when the key is absent.
    public var days: Set<Weekday>
    public var from: Int
    public var to: Int
    /// An IANA zone name as written, e.g. `Europe/Berlin`; `UTC` by default.
    public var zone: String

    public init(days: Set<Weekday> = Set(Weekday.allCases), from: Int, to: Int, zone: String = "UTC") {
        self.days = days
        self.from = from
        self.to = to
        self.zone = zone
    }
}

/// Days as rule files write them; raw values count from Sunday as 0.
public enum Weekday: Int, Sendable, CaseIterable, Comparable {
    case sun, mon, tue, wed, thu, fri, sat

    public var name: String { ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][rawValue] }

    public init?(name: String) {
        guard let day = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = day
    }

    public static func < (a: Weekday, b: Weekday) -> Bool { a.rawValue < b.rawValue }
}

public enum QuietAction: String, Sendable, Equatable, CaseIterable {
    /// Keep what falls in a window and deliver it as one digest when the window ends.
    case hold
    /// Count it and let it go.
    case drop
}

/// `group`: events of one key within `window` milliseconds of the first go out as one digest of
/// at most `max` events.
public struct GroupSpec: Sendable, Equatable {
    public static let defaultMax = 100
    public static let maxRange = 2...1000

    public var window: Int64
    public var by: [GroupField]
    public var max: Int

    public init(window: Int64, by: [GroupField] = [], max: Int = GroupSpec.defaultMax) {
        self.window = window
        self.by = by
        self.max = max
    }
}

/// An event field a group key is made of.
public enum GroupField: String, Sendable, Equatable, CaseIterable {
    case rule
    case symbol
    case condition
}

/// `rate`: at most `count` deliveries start in any `per` milliseconds of wall time.
public struct RateSpec: Sendable, Equatable {
    public var count: Int
    public var per: Int64

    public init(count: Int, per: Int64) {
        self.count = count
        self.per = per
    }
}
