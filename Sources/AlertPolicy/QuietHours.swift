import AlertModel
import Foundation

/// The quiet-hours stage's calendar (Docs/sinks.md#quiet-hours): which window, if any, an
/// event's time falls in, read in each window's IANA zone (Foundation's `TimeZone`, from the
/// system's tzdata).
///
/// A window starts on one of its days at `from` local time and ends at `to` on the same day,
/// or on the next day when `from >= to` (past midnight; equal times make a whole day). Local
/// times become instants as a careful user expects across a DST change: a local time the clocks
/// skip is the moment they jump, and one they pass twice is its first pass.
public struct QuietHours: Sendable {
    public struct Window: Sendable {
        public let spec: QuietWindowSpec
        let zone: TimeZone
    }

    public let windows: [Window]
    public let action: QuietAction

    /// Fails on the first zone name the system does not know.
    public init(_ specs: [QuietWindowSpec], action: QuietAction = .hold) throws(UnknownZone) {
        var windows: [Window] = []
        for spec in specs {
            guard let zone = Self.zone(named: spec.zone) else { throw UnknownZone(name: spec.zone) }
            windows.append(Window(spec: spec, zone: zone))
        }
        self.windows = windows
        self.action = action
    }

    /// The zone for an IANA name the system's tzdata lists (`Europe/Berlin`, `UTC`); nil otherwise,
    /// also for what `TimeZone(identifier:)` would read as an offset or an abbreviation.
    public static func zone(named name: String) -> TimeZone? {
        guard name == "UTC" || knownZones.contains(name) else { return nil }
        return TimeZone(identifier: name)
    }

    private static let knownZones = Set(TimeZone.knownTimeZoneIdentifiers)

    /// The window interval holding `time` (epoch ms), or nil. Where windows overlap, the one
    /// that started first wins, and of those the one that ends last.
    public func interval(containing time: Int64) -> QuietInterval? {
        var found: QuietInterval?
        for window in windows {
            guard let interval = window.interval(containing: time) else { continue }
            if let best = found, (best.start, -best.end) <= (interval.start, -interval.end) { continue }
            found = interval
        }
        return found
    }
}

/// `[start, end)` in epoch milliseconds.
public struct QuietInterval: Sendable, Equatable {
    public var start: Int64
    public var end: Int64
}

public struct UnknownZone: Error, Sendable, Equatable {
    public let name: String
}

extension QuietHours.Window {
    static let day: Int64 = 86_400

    func interval(containing time: Int64) -> QuietInterval? {
        let second = floorDivMod(time, 1_000).0
        let local = second + offset(second)
        let today = floorDivMod(local, Self.day).0
        // A window holding `time` starts on the local day of `time`, or, when it wraps past
        // midnight, on the local day before it: those two days are the only candidates.
        for day in [today - 1, today] {
            guard spec.days.contains(Self.weekday(day)) else { continue }
            let start = instant(local: day * Self.day + Int64(spec.from) * 60) * 1_000
            let endDay = spec.to > spec.from ? day : day + 1
            let end = instant(local: endDay * Self.day + Int64(spec.to) * 60) * 1_000
            if start <= time && time < end { return QuietInterval(start: start, end: end) }
        }
        return nil
    }

    /// 1970-01-01, day 0, was a Thursday.
    static func weekday(_ day: Int64) -> Weekday {
        Weekday(rawValue: Int(floorDivMod(day + 4, 7).1))!
    }

    /// Seconds east of UTC at the instant `second`.
    func offset(_ second: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(second))))
    }

    /// The first instant (epoch seconds) whose local time is `local` or, in a gap the clocks
    /// skip, the instant they skip it.
    func instant(local: Int64) -> Int64 {
        // Offsets a day either side bound every offset in between, for every real zone.
        let before = offset(local - Self.day), after = offset(local + Self.day)
        let exact = [local - before, local - after].filter { $0 + offset($0) == local }
        if let first = exact.min() { return first }
        // A gap: local time jumps over `local` between these two instants; find the jump.
        var low = min(local - before, local - after), high = max(local - before, local - after)
        while low < high {
            let middle = low + (high - low) / 2
            if middle + offset(middle) >= local { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
