import AlertModel

/// The reference's own rule model, read from the JSON files users write. It shares nothing
/// with AlertModel's `Rule`, so a misreading in the real validation cannot hide in both.
public struct RefRule {
    /// `symbols` holds the entries as written; `match` the filter's members, `source` among them.
    public enum Scope {
        case symbols([String]), match([(String, RefJSON)]), portfolio(String), series(String)
    }
    public enum Repeat: Equatable { case rearm, once, every(Int64) }
    public enum Side { case above, below }

    public indirect enum Condition {
        case above(Double), below(Double), crossesAbove(Double), crossesBelow(Double)
        case inside(Double, Double), outside(Double, Double)
        case change(window: Int64, Side, Double)
        case fromHigh(window: Int64, Side, Double)
        case fromLow(window: Int64, Side, Double)
        case pnl(Side, Double)
        case movePercent(Double)
        case moveStep(Double)
        case all([Condition]), any([Condition])
        case volume(Side, Double)
    }

    public var id: String
    public var scope: Scope
    public var condition: Condition
    public var repeatMode: Repeat = .rearm
    public var cooldown: Int64 = 0
    public var hysteresis: Double = 0
    public var enabled = true
    public var sustain: Int64?
    public var expires: Int64?
    public var resolve = false
    /// The file's `version`: windows over 24 h use hour buckets only in version 2 files.
    public var version: Int
}

/// Keys (rules v3 §1, §3): `SYMBOL` for ticks without a source, `source:SYMBOL` for a source's.
public enum RefKey {
    /// The key a tick keeps its state under.
    public static func of(_ tick: Tick) -> String {
        tick.source.map { "\($0):\(tick.symbol.uppercased())" } ?? tick.symbol.uppercased()
    }

    /// The key an entry of a version 3 file names: `source:SYMBOL` when it holds a `:` (the source
    /// as written, the symbol upper-cased), else the upper-cased symbol. In versions 1 and 2 a
    /// `:` is part of the symbol.
    public static func of(entry: String, version: Int) -> String {
        guard version >= 3, let colon = entry.firstIndex(of: ":") else { return entry.uppercased() }
        return entry[..<colon] + ":" + entry[entry.index(after: colon)...].uppercased()
    }
}

/// A series (rules v3 §4).
public struct RefSeries {
    public enum Kind: String { case median, mean, min, max, spread, ratio }
    public var name: String
    public var kind: Kind
    /// Keys, in file order.
    public var members: [String]
    public var maxAge: Int64
    public var quorum: Int
    /// `@NAME`, upper-cased.
    public var symbol: String { "@" + name.uppercased() }
}

public struct RefPortfolio {
    public var name: String
    /// Upper-cased symbol → amount, in file order.
    public var holdings: [(String, Double)]
    public var cost: Double?
    /// `@NAME`, upper-cased: the symbol of the portfolio's synthetic ticks.
    public var symbol: String { "@" + name.uppercased() }
}

/// All files given together: rules and portfolios in the order of the files, then of each file.
public struct RefRuleSet {
    public var rules: [RefRule] = []
    public var portfolios: [RefPortfolio] = []
    public var series: [RefSeries] = []
    /// The names of the sources the files define.
    public var sources: [String] = []

    public init(files: [String]) throws {
        for text in files { try read(text) }
    }

    private mutating func read(_ text: String) throws {
        let json = try RefJSON.parse(text)
        guard let version = json["version"]?.number.map(Int.init), (1...3).contains(version) else {
            throw RefReadError("version must be 1, 2 or 3")
        }
        let defaults = json["defaults"]
        for (name, entry) in json["portfolios"]?.members ?? [] {
            let holdings = (entry["holdings"]?.members ?? []).map {
                (RefKey.of(entry: $0.0, version: version), $0.1.number ?? 0)
            }
            portfolios.append(RefPortfolio(name: name, holdings: holdings, cost: entry["cost"]?.number))
        }
        sources += (json["sources"]?.members ?? []).map(\.0)
        for (name, entry) in json["series"]?.members ?? [] {
            guard let (kindName, list) = entry.members?.first(where: { RefSeries.Kind(rawValue: $0.0) != nil }),
                let kind = RefSeries.Kind(rawValue: kindName)
            else { throw RefReadError("series \(name): no kind") }
            let members = (list.array ?? []).compactMap(\.string).map { RefKey.of(entry: $0, version: version) }
            let maxAge = try entry["maxAge"]?.string.map(Self.duration) ?? 60_000
            // `spread` and `ratio` need both members fresh.
            let quorum = kind == .spread || kind == .ratio ? 2 : entry["quorum"]?.number.map(Int.init) ?? 1
            series.append(RefSeries(name: name, kind: kind, members: members, maxAge: maxAge, quorum: quorum))
        }
        for entry in json["rules"]?.array ?? [] {
            rules.append(try rule(entry, defaults: defaults, version: version))
        }
    }

    private func rule(_ json: RefJSON, defaults: RefJSON?, version: Int) throws -> RefRule {
        guard let id = json["id"]?.string, let when = json["when"] else {
            throw RefReadError("rule without id or when")
        }
        let scope: RefRule.Scope
        if let s = json["symbol"]?.string {
            scope = .symbols([s])
        } else if let list = json["symbols"]?.array {
            scope = .symbols(list.compactMap(\.string))
        } else if let filter = json["match"]?.members {
            scope = .match(filter)
        } else if let name = json["portfolio"]?.string {
            scope = .portfolio(name)
        } else if let name = json["series"]?.string {
            scope = .series(name)
        } else {
            throw RefReadError("\(id): no scope")
        }
        let condition = try Self.condition(when)
        var isMove = false, isPercentMove = false
        if case .movePercent = condition { isMove = true; isPercentMove = true }
        if case .moveStep = condition { isMove = true }
        var rule = RefRule(id: id, scope: scope, condition: condition, version: version)
        // A default is taken only where the rule may carry the key itself (Docs/rules.md,
        // defaults): a file-wide `repeat` does not make a `move` rule invalid, nor a file-wide
        // `hysteresis` a percent move.
        func value(_ key: String, allowed: Bool = true) -> RefJSON? {
            json[key] ?? (allowed ? defaults?[key] : nil)
        }
        if let r = value("repeat", allowed: !isMove) {
            if let s = r.string { rule.repeatMode = s == "once" ? .once : .rearm }
            if let every = r["every"]?.string { rule.repeatMode = .every(try Self.duration(every)) }
        }
        if let c = value("cooldown")?.string { rule.cooldown = try Self.duration(c) }
        if let h = value("hysteresis", allowed: !isPercentMove)?.number { rule.hysteresis = h }
        if let e = json["enabled"]?.bool { rule.enabled = e }
        if let f = json["for"]?.string { rule.sustain = try Self.duration(f) }
        if let e = json["expires"]?.string {
            guard let at = Timestamp.parse(Array(e.utf8)) else { throw RefReadError("\(id): bad expires") }
            rule.expires = at
        }
        if let r = json["resolve"]?.bool { rule.resolve = r }
        return rule
    }

    static func condition(_ json: RefJSON) throws -> RefRule.Condition {
        guard let (key, body) = json.members?.first else { throw RefReadError("empty condition") }
        func side(_ b: RefJSON) throws -> (RefRule.Side, Double) {
            if let x = b["above"]?.number { return (.above, x) }
            if let x = b["below"]?.number { return (.below, x) }
            throw RefReadError("\(key): no above/below")
        }
        func window(_ b: RefJSON) throws -> Int64 {
            guard let w = b["window"]?.string else { throw RefReadError("\(key): no window") }
            return try duration(w)
        }
        switch key {
        case "price":
            guard let (op, arg) = body.members?.first else { throw RefReadError("price: no operator") }
            if let x = arg.number {
                switch op {
                case "above": return .above(x)
                case "below": return .below(x)
                case "crossesAbove": return .crossesAbove(x)
                case "crossesBelow": return .crossesBelow(x)
                default: break
                }
            }
            if let pair = arg.array?.compactMap(\.number), pair.count == 2 {
                if op == "inside" { return .inside(pair[0], pair[1]) }
                if op == "outside" { return .outside(pair[0], pair[1]) }
            }
            throw RefReadError("price: bad operator \(op)")
        case "change":
            let (s, c) = try side(body)
            return .change(window: try window(body), s, c)
        case "fromHigh":
            let (s, c) = try side(body)
            return .fromHigh(window: try window(body), s, c)
        case "fromLow":
            let (s, c) = try side(body)
            return .fromLow(window: try window(body), s, c)
        case "pnl":
            let (s, c) = try side(body)
            return .pnl(s, c)
        case "move":
            if let p = body["percent"]?.number { return .movePercent(p) }
            if let s = body["step"]?.number { return .moveStep(s) }
            throw RefReadError("move: no percent or step")
        case "volume":
            let (s, v) = try side(body)
            return .volume(s, v)
        case "all": return .all(try (body.array ?? []).map(condition))
        case "any": return .any(try (body.array ?? []).map(condition))
        default: throw RefReadError("unknown condition \(key)")
        }
    }

    /// `"1h30m"` → milliseconds.
    static func duration(_ text: String) throws -> Int64 {
        var total: Int64 = 0
        var rest = Substring(text)
        guard !rest.isEmpty else { throw RefReadError("empty duration") }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            let scale: Int64
            switch unit {
            case "ms": scale = 1
            case "s": scale = 1000
            case "m": scale = 60_000
            case "h": scale = 3_600_000
            case "d": scale = 86_400_000
            default: throw RefReadError("bad duration \(text)")
            }
            guard let n = Int64(digits) else { throw RefReadError("bad duration \(text)") }
            total += n * scale
        }
        return total
    }
}
