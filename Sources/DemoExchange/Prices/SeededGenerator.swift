import Foundation

/// SplitMix64: a small generator whose output depends only on the seed, on every platform
/// and Swift version (the standard library's `random(in:using:)` makes no such promise, so
/// the conversions to `Double` are done here too).
struct SeededGenerator: Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// Uniform in `range`.
    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// Standard normal (Box–Muller).
    mutating func normal() -> Double {
        let u = max(unit(), 0x1p-53)
        let v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}
