import AlertModel

/// Keys (rules v3 §1, §3): everything the engine keeps per symbol it keeps per key, the
/// upper-cased symbol of a tick without a source, `source:SYMBOL` for a tick with one (the
/// source as written, `[a-z0-9-]{1,32}`), `@NAME` for a portfolio's or a series' ticks.
enum Key {
    /// The key an entry names: `source:SYMBOL` when the part before its first `:` is a source
    /// name (kept as written, the symbol upper-cased), else the upper-cased entry. Saved keys
    /// read back unchanged: a key without a source is upper-cased, so a source-name prefix
    /// with a letter in it can only be a source's.
    static func of(_ entry: String) -> String {
        qualified(entry)?.key ?? Symbol.normalize(entry)
    }

    /// `entry`'s key and source when it is qualified (`source:SYMBOL`), else nil.
    static func qualified(_ entry: String) -> (key: String, source: String)? {
        guard let colon = entry.firstIndex(of: ":"), SourceDefinition.isName(entry[..<colon]) else { return nil }
        let source = String(entry[..<colon])
        return (Tick.key(source: source, symbol: entry[entry.index(after: colon)...]), source)
    }

    /// The key of a `symbol`/`symbols` entry of a rule and whether it is qualified: only in a
    /// version 3 file; in versions 1 and 2 a `:` is part of the symbol.
    static func ofEntry(_ entry: String, fileVersion: UInt8) -> (key: String, qualified: Bool) {
        if fileVersion >= 3, let q = qualified(entry) { return (q.key, true) }
        return (Symbol.normalize(entry), false)
    }

    /// The symbol an event of `key` carries: the key less its `source:` prefix.
    static func eventSymbol(_ key: String, source: String?) -> String {
        guard let source else { return key }
        return String(key.utf8.dropFirst(source.utf8.count + 1))!
    }
}

/// Which rules of one kind (indexed, or evaluated pair by pair) apply to a key by scope (rules
/// v3 §3): unqualified `symbol`/`symbols` entries to every key with that symbol whatever its
/// source, qualified ones to exactly their key, `match` rules through the market list of the
/// key's source (v1 §4's list for keys without a source) and their `source` restriction.
struct ScopeIndex: Sendable {
    /// Unqualified entries by upper-cased symbol.
    private let bySymbol: [String: [Int32]]
    /// Qualified entries (`source:SYMBOL`) by key.
    private let byKey: [String: [Int32]]
    /// Enabled `match` rules.
    let match: [Int32]

    /// The enabled rules for which `includes` holds, by scope; portfolio and series scopes are
    /// left to the caller, as are `listed` rules when `listed` is false.
    init(rules: [Rule], includes: (Rule) -> Bool) {
        var bySymbol: [String: [Int32]] = [:]
        var byKey: [String: [Int32]] = [:]
        var match: [Int32] = []
        for i in rules.indices where rules[i].enabled && includes(rules[i]) {
            switch rules[i].scope {
            case .symbols(let list):
                var seen = Set<String>()
                for entry in list {
                    let (key, qualified) = Key.ofEntry(entry, fileVersion: rules[i].fileVersion)
                    guard seen.insert(key).inserted else { continue }
                    if qualified {
                        byKey[key, default: []].append(Int32(i))
                    } else {
                        bySymbol[key, default: []].append(Int32(i))
                    }
                }
            case .match:
                match.append(Int32(i))
            case .portfolio, .series:
                continue
            }
        }
        self.bySymbol = bySymbol
        self.byKey = byKey
        self.match = match
    }

    /// Indices of the rules that apply to `key` (whose tick has `source` and upper-cased
    /// `symbol`), ascending; `markets` is the market list of the key's source.
    func applicable(key: String, source: String?, symbol: String, markets: MarketList?, of rules: [Rule]) -> [Int32] {
        var applicable = bySymbol[symbol] ?? []
        if source != nil, let qualified = byKey[key] {
            applicable = Array(Set(applicable).union(qualified)).sorted()
        }
        guard !match.isEmpty, let markets else { return applicable }
        return markets.adding(match, of: rules, to: applicable, for: symbol, source: source)
    }
}

extension MarketList {
    /// `applicable` (rule indices, ascending) with those of `matchRules` whose filter holds for
    /// one of `symbol`'s market entries and whose `source` restriction admits `source` added, in
    /// rule order (Docs/rules.md#scope).
    func adding(
        _ matchRules: [Int32], of rules: [Rule], to applicable: [Int32], for symbol: String, source: String?
    ) -> [Int32] {
        let joined = entries(for: symbol)
        guard !joined.isEmpty else { return applicable }
        var result = applicable
        for r in matchRules {
            guard case .match(let filter) = rules[Int(r)].scope else { continue }
            if let sources = filter.sources {
                guard let source, sources.contains(source) else { continue }
            }
            if joined.contains(where: filter.matches) { result.append(r) }
        }
        result.sort()
        return result
    }
}
