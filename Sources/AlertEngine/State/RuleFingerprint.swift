/// A stable 64-bit digest (FNV-1a) of what decides how a rule's pairs fire: the condition with
/// its thresholds and window, hysteresis, cooldown and repeat, and for version 2 rules the file's
/// version (it decides window buckets), `for`, the reminder interval, `expires` and `resolve`
/// (left out of a rule without them, so a version 1 rule's fingerprint stays what it is). Saved state is kept only for a
/// rule whose id and fingerprint are unchanged, so editing a rule resets that rule alone.
/// Scope, `notify`, `message`, `priority` and `enabled` are left out: changing them keeps the state of the
/// pairs that still apply.
import AlertModel

public enum RuleFingerprint {
    public static func of(_ rule: Rule) -> UInt64 {
        var w = ByteWriter()
        return of(rule, using: &w)
    }

    /// With `w` as the scratch buffer (cleared first), so many fingerprints share one.
    static func of(_ rule: Rule, using w: inout ByteWriter) -> UInt64 {
        w.clear()
        w.condition(rule.condition)
        w.double(rule.hysteresis)
        w.int64(rule.cooldown)
        w.byte(rule.repeatMode == .once ? 1 : 0)
        if rule.fileVersion != 1 || rule.extras != nil {
            w.byte(rule.fileVersion)
            var extras = rule.extras ?? RuleExtras()
            extras.highPriority = false
            w.extras(extras)
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in w.bytes {
            hash ^= UInt64(b)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
