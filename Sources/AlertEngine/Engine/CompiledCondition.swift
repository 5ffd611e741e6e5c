import AlertModel

/// A rule's condition reduced to numbers the engine compares against, with both of its key
/// levels precomputed: the level at which it fires and the one at which it re-arms
/// (the table of Docs/rules.md#conditions). The same stored Doubles serve the threshold index
/// and the exact check, so a pair is visited whenever its outcome can change.
struct CompiledCondition: Sendable {
    enum Kind: UInt8, Sendable {
        case above, below, crossesAbove, crossesBelow, inside, outside
    }

    /// `X`, `C`, or `L` for ranges.
    let a: Double
    /// Re-arm level (`X·(1 − h/100)`, `C − h`, …) or `H` for ranges.
    let b: Double
    /// Last, so a struct holding a condition can put small fields in its tail padding.
    let kind: Kind

    /// Builds the compiled form. For `change` conditions `above`/`below` behave exactly like the
    /// price levels, with `h` in percentage points instead of percent.
    init(_ condition: Condition, hysteresis h: Double) {
        switch condition {
        case .price(.above(let x)): self.init(.above, x, x * (1 - h / 100))
        case .price(.below(let x)): self.init(.below, x, x * (1 + h / 100))
        case .price(.crossesAbove(let x)): self.init(.crossesAbove, x, x * (1 - h / 100))
        case .price(.crossesBelow(let x)): self.init(.crossesBelow, x, x * (1 + h / 100))
        case .price(.inside(let l, let hi)): self.init(.inside, l, hi)
        case .price(.outside(let l, let hi)): self.init(.outside, l, hi)
        case .change(_, .above(let c)): self.init(.above, c, c - h)
        case .change(_, .below(let c)): self.init(.below, c, c + h)
        case .fromHigh, .fromLow, .pnl, .move, .all, .any, .listed, .volume:
            preconditionFailure("only rules for which Rule.isIndexed holds are compiled")
        }
    }

    private init(_ kind: Kind, _ a: Double, _ b: Double) {
        self.kind = kind
        self.a = a
        self.b = b
    }

    /// Whether the fire condition holds at `v`, the previous value being `prev` (crossings only).
    @inline(__always)
    func fires(_ v: Double, prev: Double?) -> Bool {
        switch kind {
        case .above: return v > a
        case .below: return v < a
        case .crossesAbove: guard let prev else { return false }; return prev <= a && v > a
        case .crossesBelow: guard let prev else { return false }; return prev >= a && v < a
        case .inside: return a <= v && v <= b
        case .outside: return v < a || v > b
        }
    }

    /// Whether the re-arm condition holds at `v`.
    @inline(__always)
    func rearms(_ v: Double) -> Bool {
        switch kind {
        case .above, .crossesAbove: return v <= b
        case .below, .crossesBelow: return v >= b
        case .inside: return v < a || v > b
        case .outside: return a <= v && v <= b
        }
    }

    /// A crossing holds for one tick only: a crossing during cooldown is lost, never pending.
    var isLevel: Bool { kind != .crossesAbove && kind != .crossesBelow }
}
