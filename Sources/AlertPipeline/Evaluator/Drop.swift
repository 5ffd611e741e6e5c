import AlertModel

/// A tick the pipeline did not evaluate: why, and where it came from. `replay`, `check` and
/// `run` report every drop through this one type, so a drop reads the same wherever it happens
/// and the summary line counts what the messages name.
public struct Drop: Sendable, Equatable, CustomStringConvertible {
    /// Where the dropped input came from.
    public enum Place: Sendable, Equatable, CustomStringConvertible {
        /// A line of a tick file: `FILE:LINE`.
        case line(file: String, line: Int)
        /// A tick of a source's REST snapshot: `SOURCE: SYMBOL`.
        case snapshot(source: String, symbol: String)
        /// A frame or response of a live feed: `SOURCE`.
        case feed(source: String)

        public var description: String {
            switch self {
            case .line(let file, let line): "\(file):\(line)"
            case .snapshot(let source, let symbol): "\(source): \(UserText.escaped(symbol))"
            case .feed(let source): source
            }
        }
    }

    public var reason: DropReason
    public var place: Place
    /// Why the input was not a tick at all (`reason` is `.malformed`), in its reader's words.
    public var detail: String?
    /// Which tick, when the place does not say (`SYMBOL at TIME`, symbol escaped).
    public var tick: String?

    public init(reason: DropReason, place: Place, detail: String? = nil, tick: String? = nil) {
        self.reason = reason
        self.place = place
        self.detail = detail
        self.tick = tick
    }

    /// The one line that reports the drop: `FILE:LINE: dropped: …` for a tick the engine
    /// refused, `FILE:LINE: error: …; line skipped` for a line that is not a tick,
    /// `SOURCE: frame dropped: …` for a feed frame that was not understood.
    public var description: String {
        guard let detail else { return "\(place): dropped: " + (tick.map { "\($0): " } ?? "") + reason.explanation }
        if case .feed = place { return "\(place): frame dropped: \(detail)" }
        return "\(place): error: \(detail); line skipped"
    }
}

extension DropReason {
    /// Why a tick was dropped, for people.
    public var explanation: String {
        switch self {
        case .malformed: return "not a tick"
        case .invalidPrice: return "price is not a finite number greater than 0 (invalid-price)"
        case .emptySymbol: return "symbol is empty (empty-symbol)"
        case .controlCharacter: return "symbol holds a control character (control-character)"
        case .outOfOrder: return "time is earlier than the previous tick of this symbol (out-of-order)"
        case .portfolioSymbol: return "symbol starts with @, which only portfolios use (portfolio-symbol)"
        case .aheadOfClock: return "time is further ahead of the local clock than --max-tick-skew (ahead-of-clock)"
        }
    }
}
