import AlertModel

/// Version 3's top-level `series`: name → one kind with its members, `maxAge`, `quorum`
/// (rules v3 §4; Docs/rules.md#series).
extension FileChecker {
    static let seriesKindNames = SeriesDefinition.Kind.allCases.map(\.rawValue)
    static let seriesKeys = seriesKindNames + ["maxAge", "quorum"]
    /// Members of `median`, `mean`, `min` and `max`.
    static let seriesSizes = 2...16
    static let seriesMaxAge = Limits.DurationLimit("1d")
    static let seriesMinAge: Int64 = 1_000

    /// The file's valid series, in file order. Every name, valid or not, joins the namespace,
    /// so a rule naming a broken series is not also told it is unknown.
    mutating func series(_ node: JSONNode) -> [SeriesDefinition] {
        guard let members = object(node, "'series'") else { return [] }
        var series: [SeriesDefinition] = []
        for member in members {
            seriesNames.append(NamedPlace(name: member.key, position: member.keyPosition))
            let validName = Self.isName(member.key)
            if !validName {
                error(
                    "series name must be 1 to 64 letters, digits, '.', '_' or '-', found \(UserText.double(member.key))",
                    at: member.keyPosition)
            }
            if let one = oneSeries(member.key, member.value), validName { series.append(one) }
        }
        return series
    }

    private mutating func oneSeries(_ name: String, _ node: JSONNode) -> SeriesDefinition? {
        guard let members = object(node, "series \(UserText.single(name))") else { return nil }
        var built: SeriesDefinition?
        let clean = isClean { checker in
            let suggested = checker.checkKeys(members, allowed: Self.seriesKeys)
            let given = members.filter { Self.seriesKindNames.contains($0.key) }
            if given.isEmpty, suggested.isDisjoint(with: Self.seriesKindNames) {
                checker.error(
                    "series \(UserText.single(name)) needs one of 'median', 'mean', 'min', 'max', 'spread' or 'ratio'",
                    at: node.position)
            }
            for extra in given.dropFirst() {
                checker.error(
                    "series \(UserText.single(name)) has more than one kind ('\(given[0].key)' and '\(extra.key)'); "
                        + "give exactly one", at: extra.keyPosition)
            }
            let kind = given.first.flatMap { SeriesDefinition.Kind(rawValue: $0.key) }
            if let kind, given.count == 1 { checker.seriesKinds[name] = kind }
            let keys = given.first.flatMap { checker.seriesMembers($0, kind: kind!) }
            var maxAge = SeriesDefinition(name: name, kind: .median, members: []).maxAge
            if let member = members["maxAge"] {
                maxAge = checker.seriesMaxAge(member.value) ?? maxAge
            }
            var quorum: Int?
            if let member = members["quorum"], let kind {
                if kind.isPair {
                    checker.error(
                        "'quorum' is not allowed on '\(kind.rawValue)' series: both members must be fresh",
                        at: member.keyPosition)
                } else if case .array(let elements)? = given.first?.value.value {
                    quorum = checker.wholeNumber(member.value, "'quorum'", in: 1...max(1, elements.count))
                }
            }
            if let kind, let keys, given.count == 1 {
                built = SeriesDefinition(name: name, kind: kind, members: keys, maxAge: maxAge, quorum: quorum)
            }
        }
        return clean ? built : nil
    }

    /// The members as keys: 2 to 16 distinct ones, exactly 2 for `spread` and `ratio`; never an
    /// `@` name.
    private mutating func seriesMembers(_ member: JSONMember, kind: SeriesDefinition.Kind) -> [String]? {
        let name = "'\(member.key)'"
        let wanted = kind.isPair ? "exactly 2 members [A, B]" : "2 to 16 members"
        guard case .array(let elements) = member.value.value else {
            error(
                "\(name) must be an array of \(wanted), found \(member.value.value.typeName)",
                at: member.value.position)
            return nil
        }
        let sized = kind.isPair ? elements.count == 2 : Self.seriesSizes.contains(elements.count)
        if !sized {
            error("\(name) needs \(wanted), found \(elements.count)", at: member.value.position)
        }
        var keys: [String] = []
        var firstPlace: [String: SourceOffset] = [:]
        let clean = isClean { checker in
            for element in elements {
                guard let entry = checker.nonEmptyString(element, "each member of \(name)") else { continue }
                if entry.hasPrefix("@") {
                    checker.error(
                        "a series member is a symbol or source:SYMBOL, never a portfolio's or series' value, found "
                            + UserText.double(entry), at: element.position)
                    continue
                }
                guard let key = checker.key(entry, at: element.position) else { continue }
                if let first = firstPlace[key] {
                    checker.error(
                        "member \(UserText.double(entry)) is given twice (symbols ignore case)",
                        at: element.position, first: first)
                    continue
                }
                firstPlace[key] = element.position
                keys.append(key)
            }
        }
        return clean && sized ? keys : nil
    }

    /// A duration from 1s to 1d.
    private mutating func seriesMaxAge(_ node: JSONNode) -> Int64? {
        guard let millis = duration(node, "'maxAge'", limit: Self.seriesMaxAge), case .string(let text) = node.value
        else { return nil }
        guard millis >= Self.seriesMinAge else {
            error("'maxAge' must be at least 1s, found \(UserText.double(text))", at: node.position)
            return nil
        }
        return millis
    }
}
