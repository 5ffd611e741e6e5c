import AlertModel

/// What a replay would have sent, gathered while it runs and written as one self-contained
/// HTML page (Docs/rules.md "Trying rules before they go live"): per rule the events by kind,
/// first, last and per day, noisiest first; per symbol a chart of the price with a marker per
/// event. What it keeps is bounded by `Limits` whatever the replay's length, and so is the page.
public struct ReplayReport {
    /// The bounds of what the page shows; what they leave out is counted on the page.
    public struct Limits: Sendable {
        /// Symbols with a chart: those with the most events, then those with the most ticks.
        public var chartedSymbols = 20
        /// Time slots per chart; each keeps its first, lowest, highest and last price.
        public var slotsPerChart = 240
        /// Events drawn per slot; the others are counted in the last marker's hover text.
        public var markersPerSlot = 2
        /// Characters of a message kept for a marker's hover text.
        public var messageCharacters = 100
        /// Characters of a rule id or a symbol shown.
        public var nameCharacters = 64
        /// Rows of the rules table (the noisiest rules); the others are counted in one line.
        public var listedRules = 1000
        /// Rules ids listed among those that sent nothing.
        public var listedSilentRules = 200
        /// Rules (the noisiest) with a per-day table and a per-day bar chart.
        public var rulesWithDays = 20
        /// Distinct days counted per rule; events on later days count in the totals only.
        public var daysPerRule = 400

        public init() {}
    }

    /// With the default limits the page stays under this many bytes whatever the replay
    /// (ReplayReportTests checks a worst case: long messages of characters that all escape).
    public static let sizeBound = 10_000_000

    let limits: Limits
    let sources: [(label: String, value: String)]
    var rules: [RuleTally] = []
    var ruleIndex: [String: Int] = [:]
    var tracks: [String: SymbolTrack] = [:]
    var ticks = 0
    var firstTick: Int64?
    var lastTick: Int64?

    /// `ruleIDs` in file order, so rules that send nothing are listed too; `sources` are
    /// shown at the top of the page (`("Rules", "alerts.json")`).
    public init(ruleIDs: [String], sources: [(label: String, value: String)], limits: Limits = Limits()) {
        self.limits = limits
        self.sources = sources
        for id in ruleIDs where ruleIndex[id] == nil {
            ruleIndex[id] = rules.count
            rules.append(RuleTally(id: id, order: rules.count))
        }
    }

    /// A tick the engine accepted (dropped ticks are not prices).
    public mutating func add(_ tick: Tick) {
        ticks += 1
        if firstTick.map({ tick.time < $0 }) ?? true { firstTick = tick.time }
        if lastTick.map({ tick.time > $0 }) ?? true { lastTick = tick.time }
        tracks[tick.symbol, default: Self.newTrack(limits)].add(tick: PricePoint(time: tick.time, price: tick.price))
    }

    /// An event the engine emitted.
    public mutating func add(_ alert: Alert) {
        let kind = ReportKind(alert)
        let index: Int
        if let known = ruleIndex[alert.rule] {
            index = known
        } else {
            index = rules.count
            ruleIndex[alert.rule] = index
            rules.append(RuleTally(id: alert.rule, order: index))
        }
        rules[index].add(kind: kind, time: alert.time, dayLimit: limits.daysPerRule)
        let marker = EventMarker(
            point: PricePoint(time: alert.time, price: alert.price), kind: kind, rule: alert.rule,
            message: String(alert.message.prefix(limits.messageCharacters + 1)))
        tracks[alert.symbol, default: Self.newTrack(limits)].add(event: marker)
    }

    private static func newTrack(_ limits: Limits) -> SymbolTrack {
        SymbolTrack(slotCount: limits.slotsPerChart, markersPerSlot: limits.markersPerSlot)
    }
}

extension ReportKind {
    init(_ alert: Alert) {
        switch alert.kind {
        case .alert: self = .alert
        case .reminder: self = .reminder
        case .resolved: self = .resolved
        }
    }
}
