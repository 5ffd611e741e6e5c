import AlertModel
import AlertRules

/// The symbols a feed subscribes (Docs/sources.md#the-symbols-a-feed-follows): only those the
/// rules can read from it, so a daemon watching three coins on five exchanges does not take
/// every ticker of every market.
public enum FeedSymbols {
    /// The upper-cased symbols the feed of `source` (a rule-file source's name; nil for
    /// `--source`, whose ticks have no source) must follow: every unqualified key of an enabled
    /// rule's `symbol`/`symbols`, of a portfolio's holdings and of a series' members, and the
    /// keys qualified with `source`. Nil (every market) when an enabled `match` rule can apply
    /// to the feed (its markets come from the market list), or when no key names the feed at
    /// all (it is then followed whole, as without rules, so its health still means something).
    public static func needed(by ruleSet: RuleSet, source: String?) -> Set<String>? {
        var needed: Set<String> = []
        for rule in ruleSet.rules where rule.enabled {
            switch rule.scope {
            case .symbols(let keys):
                for key in keys { if let symbol = symbol(of: key, for: source) { needed.insert(symbol) } }
            case .match(let filter):
                guard let sources = filter.sources else { return nil }
                if let source, sources.contains(source) { return nil }
            case .portfolio, .series:
                break
            }
        }
        for portfolio in ruleSet.portfolios {
            for holding in portfolio.holdings {
                if let symbol = symbol(of: holding.symbol, for: source) { needed.insert(symbol) }
            }
        }
        for series in ruleSet.series {
            for member in series.members { if let symbol = symbol(of: member, for: source) { needed.insert(symbol) } }
        }
        return needed.isEmpty ? nil : needed
    }

    /// The symbol `key` names on the feed of `source`: an unqualified key's on every feed, a
    /// `source:SYMBOL` key's only on that source's; nil for another source's key and for `@`
    /// values (portfolios and series, which no feed gives).
    static func symbol(of key: String, for source: String?) -> String? {
        if let colon = key.firstIndex(of: ":"), SourceDefinition.isName(String(key[..<colon])) {
            guard let source, key[..<colon] == source else { return nil }
            return Symbol.normalize(String(key[key.index(after: colon)...]))
        }
        return key.hasPrefix("@") ? nil : Symbol.normalize(key)
    }
}
