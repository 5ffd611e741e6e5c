import AlertModel
import AlertRules

/// Symbols the rules name that the market list of the feed they name lacks
/// (Docs/sources.md#symbols-no-market-list-has): such a symbol is never subscribed and never
/// ticks, which a user would otherwise learn only from alerts that never come. One finding per
/// feed and symbol, naming every rule, portfolio and series that names it.
public enum UnlistedSymbols {
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// The feed whose list lacks the symbol; nil: no feed's list has it (an unqualified
        /// rule symbol, which every feed's ticks may carry).
        public var feed: String?
        /// Upper-cased.
        public var symbol: String
        /// `rule 'ID'`, `portfolio 'NAME'`, `series 'NAME'`, in file order.
        public var namedBy: [String]

        public init(feed: String?, symbol: String, namedBy: [String]) {
            self.feed = feed
            self.symbol = symbol
            self.namedBy = namedBy
        }

        public var description: String {
            let users = namedBy.joined(separator: ", ")
            guard let feed else {
                return
                    "\(UserText.single(symbol)) is on no source's market list: \(users) will get no prices of it"
            }
            return
                "\(feed): \(UserText.single(symbol)) is not on its market list: \(users) will get no prices of it from \(feed)"
        }
    }

    /// One feed's market list: `tag` is the rule-file source's name (nil for `--source`);
    /// `subscribes`: the feed subscribes market by market, from its list (the five exchanges),
    /// so a symbol its list lacks is never followed. Only such feeds are reported on.
    public struct Feed: Sendable {
        public var name: String
        public var tag: String?
        public var subscribes: Bool
        public var symbols: Set<String>

        public init(name: String, tag: String?, subscribes: Bool, list: MarketList) {
            self.name = name
            self.tag = tag
            self.subscribes = subscribes
            symbols = Set(list.markets.map { Symbol.normalize($0.symbol) })
        }
    }

    /// What `ruleSet`'s enabled rules, portfolios and series name that `feeds`' lists lack: a
    /// qualified key `S:SYMBOL` on source S's list; an unqualified portfolio holding or series
    /// member (which only ticks without a source reach) on the `--source` list; an unqualified
    /// rule symbol on the `--source` list when the rules define no source, and otherwise only
    /// when `complete` (every feed has given its list) and no list has it. A feed with no list
    /// yet is left out.
    public static func find(in ruleSet: RuleSet, feeds: [Feed], complete: Bool) -> [Finding] {
        var findings: [Finding] = []
        func note(_ feed: String?, _ symbol: String, _ user: String) {
            if let i = findings.firstIndex(where: { $0.feed == feed && $0.symbol == symbol }) {
                if !findings[i].namedBy.contains(user) { findings[i].namedBy.append(user) }
            } else {
                findings.append(Finding(feed: feed, symbol: symbol, namedBy: [user]))
            }
        }
        let plain = feeds.first { $0.tag == nil }
        func check(_ key: String, by user: String, anySource: Bool) {
            guard !key.hasPrefix("@") else { return }
            if let colon = key.firstIndex(of: ":"), SourceDefinition.isName(String(key[..<colon])) {
                let tag = String(key[..<colon])
                let symbol = Symbol.normalize(String(key[key.index(after: colon)...]))
                if let feed = feeds.first(where: { $0.tag == tag }), feed.subscribes, !feed.symbols.contains(symbol) {
                    note(feed.name, symbol, user)
                }
                return
            }
            let symbol = Symbol.normalize(key)
            if !anySource || ruleSet.sources.isEmpty {
                if let plain, plain.subscribes, !plain.symbols.contains(symbol) { note(plain.name, symbol, user) }
            } else if complete, feeds.contains(where: \.subscribes),
                !feeds.contains(where: { $0.symbols.contains(symbol) })
            {
                note(nil, symbol, user)
            }
        }
        for rule in ruleSet.rules where rule.enabled {
            guard case .symbols(let keys) = rule.scope else { continue }
            for key in keys { check(key, by: "rule \(UserText.single(rule.id))", anySource: true) }
        }
        for portfolio in ruleSet.portfolios {
            for holding in portfolio.holdings {
                check(holding.symbol, by: "portfolio \(UserText.single(portfolio.name))", anySource: false)
            }
        }
        for series in ruleSet.series {
            for member in series.members {
                check(member, by: "series \(UserText.single(series.name))", anySource: false)
            }
        }
        return findings
    }
}
