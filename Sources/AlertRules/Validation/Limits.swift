import AlertModel

/// The largest value each duration and number key of a rule file takes (Docs/rules.md,
/// "Limits"). Each is far past any setting that makes sense, and small enough that what the
/// program computes from it (times, levels, deadlines, backoff) stays within 64 bits.
enum Limits {
    /// A duration limit as the docs and messages write it.
    struct DurationLimit {
        let text: String
        let millis: Int64

        init(_ text: String) {
            self.text = text
            millis = DurationText.parse(text)!
        }
    }

    static let cooldown = DurationLimit("365d")
    /// A change window's minute history is kept per symbol: 30 days is 43 200 minutes.
    static let window = DurationLimit("30d")
    /// A window in a version 2 file: over 24 hours it keeps one price per hour, 9 600 at most.
    static let longWindow = DurationLimit("400d")
    /// `for` and `repeat.every`, like `cooldown`.
    static let sustain = DurationLimit("365d")
    static let backoff = DurationLimit("1h")
    static let maxBackoff = DurationLimit("1d")
    static let maxAge = DurationLimit("30d")

    /// A number limit as the docs and messages write it.
    struct NumberLimit {
        let text: String
        let value: Double

        init(_ text: String) {
            self.text = text
            value = Double(text)!
        }
    }

    /// `above`, `below`, `crossesAbove`, `crossesBelow` and range bounds, in either sign.
    static let priceThreshold = NumberLimit("1e15")
    /// `change` `above`/`below` in percent, in either sign.
    static let changeThreshold = NumberLimit("1e6")
    /// Percent of the threshold, or percentage points for `change`.
    static let hysteresis = NumberLimit("100")
}
