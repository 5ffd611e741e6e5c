/// A stable 64-bit digest (FNV-1a) of what decides how a rule's pairs fire: the condition with
/// its thresholds and window, hysteresis, cooldown and repeat. Saved state is kept only for a
/// rule whose id and fingerprint are unchanged, so editing a rule resets that rule alone.
/// Scope, `notify`, `message` and `enabled` are left out: changing them keeps the state of the
/// pairs that still apply.
public enum RuleFingerprint {
    public static func of(_ rule: Rule) -> UInt64 {
        var w = ByteWriter()
        switch rule.condition {
        case .price(let price):
            w.byte(0)
            switch price {
            case .above(let x): w.byte(0); w.double(x)
            case .below(let x): w.byte(1); w.double(x)
            case .crossesAbove(let x): w.byte(2); w.double(x)
            case .crossesBelow(let x): w.byte(3); w.double(x)
            case .inside(let l, let h): w.byte(4); w.double(l); w.double(h)
            case .outside(let l, let h): w.byte(5); w.double(l); w.double(h)
            }
        case .change(let window, let change):
            w.byte(1)
            w.int64(window)
            switch change {
            case .above(let c): w.byte(0); w.double(c)
            case .below(let c): w.byte(1); w.double(c)
            }
        }
        w.double(rule.hysteresis)
        w.int64(rule.cooldown)
        w.byte(rule.repeatMode == .once ? 1 : 0)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in w.bytes {
            hash ^= UInt64(b)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
