import Platform

extension Evaluator {
    /// Says on standard error that the rules scoped by `match` apply to nothing, for `check` and
    /// `replay` when they have no market list: the note and its advice are the same in both.
    public static func noteNoMarketList() {
        StandardError.write("pricealert: note: 'match' rules apply to nothing without a market list (give --markets)")
    }
}
