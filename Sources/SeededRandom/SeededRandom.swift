#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SplitMix64: a small generator whose output depends only on the seed, on every platform and
/// Swift version. The benchmarks, the tests, the fuzzer and the demo exchange all draw from it,
/// so a seed names the same stream everywhere. The standard library's `random(in:using:)` makes
/// no promise across versions, so `unit`, `uniform` and `normal` convert to `Double` here.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// Uniform in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// Standard normal (Box–Muller).
    public mutating func normal() -> Double {
        let u = max(unit(), 0x1p-53)
        let v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    /// Uniform in `0..<bound` (`bound` > 0), by multiply-shift: no modulo bias worth a fuzzer's
    /// or a benchmark's concern, and the same on every platform.
    public mutating func below(_ bound: Int) -> Int {
        Int(truncatingIfNeeded: UInt64(bound).multipliedFullWidth(by: next()).high)
    }
}
