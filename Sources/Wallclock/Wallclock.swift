#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The time of day in epoch milliseconds, the one system clock the feeds, the sinks and the
/// commands read (receive times of live frames, outbox due times, webhook timestamps, saves).
/// The engine itself never reads a clock: it is given times.
public enum Wallclock {
    /// Milliseconds since 1970-01-01 00:00 UTC, from CLOCK_REALTIME.
    public static func millis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
