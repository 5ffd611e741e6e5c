import AlertModel

/// A compact encoding of validated rules, for the rules cache a `check` keeps in its state
/// folder: decoding rules costs a fraction of checking their file again (see Docs/performance.md).
/// Lists of names (`notify`, `symbols`) are written once and shared by the rules that use
/// them, in the file and in memory after decoding.
extension Rule {
    /// The format tag of `encode`; a reader refuses other tags.
    static let codingVersion: UInt8 = 2

    public static func encode(_ rules: [Rule]) -> [UInt8] {
        var lists: [[String]] = []
        var listIndex: [[String]: Int] = [:]
        func index(of list: [String]) -> Int {
            if let i = listIndex[list] { return i }
            listIndex[list] = lists.count
            lists.append(list)
            return lists.count - 1
        }
        var body = ByteWriter()
        for rule in rules {
            body.string(rule.id)
            body.optionalString(rule.message)
            body.count(index(of: rule.notify))
            body.int64(rule.cooldown)
            body.double(rule.hysteresis)
            body.condition(rule.condition)
            switch rule.scope {
            case .symbols(let symbols):
                body.byte(0)
                body.count(index(of: symbols))
            case .match(let filter):
                // Tag 4 adds `source` (rules v3) after the same fields, so tag 1 reads as before.
                body.byte(filter.sources == nil ? 1 : 4)
                body.optionalBool(filter.future)
                body.optionalString(filter.quote)
                body.optionalString(filter.base)
                body.optionalBool(filter.active)
                if let sources = filter.sources { body.count(index(of: sources)) }
            case .portfolio(let name):
                body.byte(2)
                body.string(name)
            case .series(let name):
                body.byte(3)
                body.string(name)
            }
            body.byte((rule.repeatMode == .once ? 1 : 0) | (rule.enabled ? 2 : 0))
            body.byte(rule.fileVersion)
            body.extras(rule.extras)
        }
        var w = ByteWriter()
        w.byte(codingVersion)
        w.count(lists.count)
        for list in lists {
            w.count(list.count)
            for name in list { w.string(name) }
        }
        w.count(rules.count)
        w.append(body)
        return w.bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(SnapshotError) -> [Rule] {
        var r = ByteReader(bytes)
        guard try r.byte() == codingVersion else { throw SnapshotError(reason: "unknown rule encoding") }
        var lists: [[String]] = []
        for _ in 0..<(try r.count(itemSize: 4)) {
            var list: [String] = []
            for _ in 0..<(try r.count(itemSize: 4)) { list.append(try r.string()) }
            lists.append(list)
        }
        func list(_ i: Int) throws(SnapshotError) -> [String] {
            guard i < lists.count else {
                throw SnapshotError(reason: "rule encoding names list \(i) of \(lists.count)")
            }
            return lists[i]
        }
        let count = try r.count(itemSize: 40)
        var rules: [Rule] = []
        rules.reserveCapacity(count)
        for _ in 0..<count {
            let id = try r.string()
            let message = try r.optionalString()
            let notify = try list(try r.uint32())
            let cooldown = try r.int64()
            let hysteresis = try r.double()
            let condition = try r.condition()
            let scope: Scope
            switch try r.byte() {
            case 0: scope = .symbols(try list(try r.uint32()))
            case let tag where tag == 1 || tag == 4:
                var filter = MarketFilter(
                    future: try r.optionalBool(), quote: try r.optionalString(),
                    base: try r.optionalString(), active: try r.optionalBool())
                if tag == 4 { filter.sources = try list(try r.uint32()) }
                scope = .match(filter)
            case 2: scope = .portfolio(try r.string())
            case 3: scope = .series(try r.string())
            case let other: throw SnapshotError(reason: "unknown scope tag \(other)")
            }
            let flags = try r.byte()
            let fileVersion = try r.byte()
            let extras = try r.extras()
            rules.append(
                Rule(
                    id: id, scope: scope, condition: condition, notify: notify,
                    repeatMode: flags & 1 != 0 ? .once : .rearm, cooldown: cooldown,
                    hysteresis: hysteresis, message: message, enabled: flags & 2 != 0,
                    fileVersion: fileVersion, extras: extras))
        }
        guard r.isAtEnd else { throw SnapshotError(reason: "rule encoding has \(r.remaining) bytes too many") }
        return rules
    }
}

extension ByteWriter {
    /// A condition with its thresholds and window (also what `RuleFingerprint` digests).
    mutating func condition(_ condition: Condition) {
        switch condition {
        case .price(let price):
            byte(0)
            switch price {
            case .above(let x): byte(0); double(x)
            case .below(let x): byte(1); double(x)
            case .crossesAbove(let x): byte(2); double(x)
            case .crossesBelow(let x): byte(3); double(x)
            case .inside(let l, let h): byte(4); double(l); double(h)
            case .outside(let l, let h): byte(5); double(l); double(h)
            }
        case .change(let window, let change):
            byte(1)
            int64(window)
            side(change)
        case .fromHigh(let window, let change):
            byte(2)
            int64(window)
            side(change)
        case .fromLow(let window, let change):
            byte(3)
            int64(window)
            side(change)
        case .pnl(let change):
            byte(4)
            side(change)
        case .move(.percent(let p)):
            byte(5); byte(0); double(p)
        case .move(.step(let s)):
            byte(5); byte(1); double(s)
        case .all(let members), .any(let members):
            if case .all = condition { byte(6) } else { byte(7) }
            count(members.count)
            for member in members { self.condition(member) }
        case .listed:
            byte(8)
        case .volume(.above(let v)):
            byte(9); byte(0); double(v)
        case .volume(.below(let v)):
            byte(9); byte(1); double(v)
        }
    }

    private mutating func side(_ change: ChangeCondition) {
        switch change {
        case .above(let c): byte(0); double(c)
        case .below(let c): byte(1); double(c)
        }
    }

    /// The version 2 keys: a 0 byte when there are none.
    mutating func extras(_ extras: RuleExtras?) {
        guard let extras else { return byte(0) }
        byte(1)
        optional(extras.sustain)
        optional(extras.remindEvery)
        optional(extras.expires)
        byte((extras.resolve ? 1 : 0) | (extras.highPriority ? 2 : 0))
    }

    mutating func optionalString(_ value: String?) {
        guard let value else { return byte(0) }
        byte(1)
        string(value)
    }

    mutating func optionalBool(_ value: Bool?) {
        byte(value.map { $0 ? 2 : 1 } ?? 0)
    }
}

extension ByteReader {
    mutating func condition() throws(SnapshotError) -> Condition {
        switch try byte() {
        case 0:
            switch try byte() {
            case 0: return .price(.above(try double()))
            case 1: return .price(.below(try double()))
            case 2: return .price(.crossesAbove(try double()))
            case 3: return .price(.crossesBelow(try double()))
            case 4: return .price(.inside(try double(), try double()))
            case 5: return .price(.outside(try double(), try double()))
            case let other: throw SnapshotError(reason: "unknown price operator \(other)")
            }
        case 1:
            let window = try int64()
            return .change(window: window, try side())
        case 2:
            let window = try int64()
            return .fromHigh(window: window, try side())
        case 3:
            let window = try int64()
            return .fromLow(window: window, try side())
        case 4:
            return .pnl(try side())
        case 5:
            switch try byte() {
            case 0: return .move(.percent(try double()))
            case 1: return .move(.step(try double()))
            case let other: throw SnapshotError(reason: "unknown move kind \(other)")
            }
        case let tag where tag == 6 || tag == 7:
            var members: [Condition] = []
            for _ in 0..<(try count(itemSize: 2)) { members.append(try condition()) }
            return tag == 6 ? .all(members) : .any(members)
        case 8:
            return .listed
        case 9:
            switch try byte() {
            case 0: return .volume(.above(try double()))
            case 1: return .volume(.below(try double()))
            case let other: throw SnapshotError(reason: "unknown volume operator \(other)")
            }
        case let other: throw SnapshotError(reason: "unknown condition \(other)")
        }
    }

    private mutating func side() throws(SnapshotError) -> ChangeCondition {
        switch try byte() {
        case 0: return .above(try double())
        case 1: return .below(try double())
        case let other: throw SnapshotError(reason: "unknown change operator \(other)")
        }
    }

    mutating func extras() throws(SnapshotError) -> RuleExtras? {
        guard try byte() == 1 else { return nil }
        let sustain = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        let every = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        let expires = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        let flags = try byte()
        return RuleExtras(
            sustain: sustain, remindEvery: every, expires: expires,
            resolve: flags & 1 != 0, highPriority: flags & 2 != 0)
    }

    mutating func optionalString() throws(SnapshotError) -> String? {
        try optional { (r: inout ByteReader) throws(SnapshotError) in try r.string() }
    }

    mutating func optionalBool() throws(SnapshotError) -> Bool? {
        switch try byte() {
        case 0: return nil
        case 1: return false
        case 2: return true
        case let other: throw SnapshotError(reason: "bad boolean \(other)")
        }
    }
}
