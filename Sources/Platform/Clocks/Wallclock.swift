#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The time of day in epoch milliseconds, as the feeds, the sinks and the commands read it
/// (receive times of live frames, outbox due times, webhook timestamps, saves). The engine
/// itself never reads a clock: it is given times.
public enum Wallclock {
    /// Milliseconds since 1970-01-01 00:00 UTC, from CLOCK_REALTIME.
    public static func millis() -> Int64 {
        nanoseconds(of: CLOCK_REALTIME) / 1_000_000
    }
}

/// Time from an arbitrary fixed point (CLOCK_MONOTONIC), for deadlines and elapsed times: it
/// never jumps when the time of day is set. Integers rather than `ContinuousClock` instants, for
/// deadlines kept in atomics and compared in C-style loops (the exec sink's child watch, the
/// fuzzer's watchdog).
public enum Monotonic {
    /// Nanoseconds since the fixed point.
    public static func nanoseconds() -> Int64 {
        Wallclock.nanoseconds(of: CLOCK_MONOTONIC)
    }

    /// Whole milliseconds since the fixed point.
    public static func milliseconds() -> Int64 {
        nanoseconds() / 1_000_000
    }

    /// Seconds since the fixed point, for printing rates and durations.
    public static func seconds() -> Double {
        Double(nanoseconds()) / 1e9
    }
}

extension Wallclock {
    static func nanoseconds(of clock: clockid_t) -> Int64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// The system clock against the monotonic one between two readings: when the time of day moves
/// by more than the monotonic time did, the clock was stepped (set by hand, an NTP step, a
/// virtual machine resumed) or the machine was suspended (the monotonic clock stops then).
/// Readings are given, so a test can step a clock of its own.
public struct ClockStepWatch: Sendable {
    private var wall: Int64
    private var monotonic: Int64

    public init(wall: Int64 = Wallclock.millis(), monotonic: Int64 = Monotonic.milliseconds()) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// The step since the previous reading in ms (negative: back), or nil when the clocks moved
    /// together within 1 s plus 0.1 % of the time between the readings (what NTP's slewing
    /// changes at most, 500 ppm, stays inside that).
    public mutating func step(wall: Int64, monotonic: Int64) -> Int64? {
        let elapsed = monotonic - self.monotonic
        let step = wall - (self.wall + elapsed)
        self.wall = wall
        self.monotonic = monotonic
        return abs(step) > 1_000 + abs(elapsed) / 1_000 ? step : nil
    }
}

/// Whole milliseconds elapsed on an injected clock since this was made, and waits on that same
/// clock: what rate limits, retry backoff and periodic saves measure their intervals with and
/// sleep by, so that setting the time of day (a step back or forward, an NTP correction) neither
/// stalls nor hurries them. Production passes `ContinuousClock()`; tests pass a clock they drive
/// (`ManualClock` in the test support), which then moves every reading and wakes every sleep.
public struct ElapsedMillis: Sendable {
    private let read: @Sendable () -> Int64
    private let pause: @Sendable (Duration) async throws -> Void

    public init(_ clock: any Clock<Duration> = ContinuousClock()) {
        (read, pause) = Self.functions(clock)
    }

    private static func functions<C: Clock<Duration>>(
        _ clock: C
    )
        -> (@Sendable () -> Int64, @Sendable (Duration) async throws -> Void)
    {
        let origin = clock.now
        return ({ origin.duration(to: clock.now).milliseconds }, { try await clock.sleep(for: $0) })
    }

    /// Milliseconds since this was made (never negative for a clock that never goes back).
    public func callAsFunction() -> Int64 { read() }

    /// Returns once `duration` has passed on the clock; throws `CancellationError` when the task
    /// is cancelled first.
    public func sleep(for duration: Duration) async throws {
        try await pause(duration)
    }
}
