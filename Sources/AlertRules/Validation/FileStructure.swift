import AlertModel

/// The top level of a rule file: `version`, `rules`, `sinks`, `defaults`, in version 2
/// `portfolios`, and in version 3 `sources` and `series` (Docs/rules.md#file-structure).
extension FileChecker {
    static let topLevelKeys = ["version", "rules", "sinks", "defaults", "portfolios", "sources", "series"]

    /// What one file holds once checked.
    struct Contents {
        var rules: [Rule] = []
        var sinks: [SinkDefinition] = []
        var portfolios: [Portfolio] = []
        var sources: [SourceDefinition] = []
        var series: [SeriesDefinition] = []
    }

    /// The file's valid rules, sinks and portfolios; what is invalid is reported and left out.
    /// The rules come from `streamed` when the reader handed them over one by one.
    mutating func ruleFile(_ root: JSONNode) -> Contents {
        guard let members = object(root, "a rule file") else { return Contents() }
        let suggested = checkKeys(members, allowed: Self.topLevelKeys)
        if let version = requireKey("version", in: root, members, suggested: suggested) {
            self.version = checkVersion(version.value) ?? 3
        }
        var contents = Contents()
        if let member = members["sources"], allowsVersion3(member) { contents.sources = sources(member.value) }
        if let member = members["portfolios"], allowsVersion2(member) { contents.portfolios = portfolios(member.value) }
        if let member = members["series"], allowsVersion3(member) { contents.series = series(member.value) }
        contents.sinks = members["sinks"].map { self.sinks($0.value) } ?? []
        let defaultsNode = members["defaults"]?.value
        let fileDefaults: RuleDefaults
        if let streamed, let defaultsNode, streamed.defaultsAt == defaultsNode.position, streamed.version == version {
            fileDefaults = streamed.defaults
        } else {
            fileDefaults = defaultsNode.map { self.defaults($0) } ?? RuleDefaults()
        }
        guard let list = requireKey("rules", in: root, members, suggested: suggested),
            let elements = array(list.value, "'rules'")
        else { return contents }
        guard let streamed else {
            contents.rules = elements.compactMap { rule($0, defaults: fileDefaults) }
            return contents
        }
        if streamed.defaultsAt == defaultsNode?.position, streamed.version == version {
            contents.rules = streamed.rules
            return contents
        }
        // `defaults` or `version` is written after `rules`: check the rules again, with them.
        forgetStreamedRules(streamed)
        contents.rules = streamed.offsets.compactMap { offset in
            JSONReader.value(in: lines.bytes, at: offset).flatMap { rule($0, defaults: fileDefaults) }
        }
        return contents
    }

    /// Checks and builds one element of the top-level `rules` as the reader hands it over;
    /// `before` are the top-level members read before `rules` (where `defaults` usually is).
    mutating func streamedRule(_ node: JSONNode, before: [JSONMember]) {
        startStreaming(before: before)
        let rule = rule(node, defaults: streamed!.defaults)
        streamed!.add(rule, at: node.position, marks: marks)
    }

    /// Sets up `streamed` at the first rule, from the members before `rules`.
    mutating func startStreaming(before: [JSONMember]) {
        if streamed == nil {
            // The version as written, unchecked (`ruleFile` checks it, and checks the rules
            // again if they were read as another version).
            if case .number(let text)? = before["version"]?.value.value, let written = Double(text),
                let known = UInt8(exactly: written), (1...3).contains(known)
            {
                version = known
            }
            // Marked before `defaults` is checked: if the rules are checked again, so is it.
            let start = marks
            let defaultsNode = before["defaults"]?.value
            let defaults = defaultsNode.map { self.defaults($0) } ?? RuleDefaults()
            streamed = StreamedRules(
                defaultsAt: defaultsNode?.position, defaults: defaults, version: version,
                marks: start)
        }
    }

    /// How much each record of the checker holds, to take back what checking some rules added.
    var marks: RecordMarks {
        RecordMarks(
            problems: problems.count, ids: ruleIDs.count, references: sinkReferences.count,
            portfolios: portfolioReferences.count, pnl: pnlReferences.count, expirations: expirations.count,
            sources: sourceReferences.count, series: seriesReferences.count)
    }

    /// Takes back what checking the streamed rules reported and recorded.
    private mutating func forgetStreamedRules(_ streamed: StreamedRules) {
        forget(from: streamed.start, to: streamed.end)
    }

    /// Takes back what was reported and recorded between two marks.
    mutating func forget(from: RecordMarks, to: RecordMarks) {
        problems.removeSubrange(from.problems..<to.problems)
        ruleIDs.removeSubrange(from.ids..<to.ids)
        sinkReferences.removeSubrange(from.references..<to.references)
        portfolioReferences.removeSubrange(from.portfolios..<to.portfolios)
        pnlReferences.removeSubrange(from.pnl..<to.pnl)
        expirations.removeSubrange(from.expirations..<to.expirations)
        sourceReferences.removeSubrange(from.sources..<to.sources)
        seriesReferences.removeSubrange(from.series..<to.series)
    }

    /// 1, 2 or 3 (`1.0`, `2.0` and `3.0` too), or nil after reporting anything else.
    private mutating func checkVersion(_ node: JSONNode) -> UInt8? {
        guard case .number(let text) = node.value else {
            error("'version' must be the number 1, 2 or 3, found \(node.value.typeName)", at: node.position)
            return nil
        }
        switch Double(text) {
        case 1: return 1
        case 2: return 2
        case 3: return 3
        default:
            error("'version' must be 1, 2 or 3, found \(UserText.escaped(text))", at: node.position)
            return nil
        }
    }
}

/// How many entries each record of a `FileChecker` held at one moment.
struct RecordMarks {
    var problems: Int
    var ids: Int
    var references: Int
    var portfolios: Int
    var pnl: Int
    var expirations: Int
    var sources: Int
    var series: Int
}

/// The rules of a file checked while it was read (`FileChecker.streamedRule`), with what
/// checking them added to the checker, so they can be checked again if `defaults` or
/// `version` turns out to come after them.
struct StreamedRules {
    /// Where the `defaults` used starts (nil: the file had none before `rules`), and its value.
    var defaultsAt: SourceOffset?
    var defaults: RuleDefaults
    /// The version the rules were checked as.
    var version: UInt8
    var rules: [Rule] = []
    /// Where each element of `rules` starts, valid or not.
    var offsets: [SourceOffset] = []
    /// The checker's records before the first rule and after the last one.
    var start: RecordMarks
    var end: RecordMarks

    init(defaultsAt: SourceOffset?, defaults: RuleDefaults, version: UInt8, marks: RecordMarks) {
        self.defaultsAt = defaultsAt
        self.defaults = defaults
        self.version = version
        start = marks
        end = marks
    }

    mutating func add(_ rule: Rule?, at offset: SourceOffset, marks: RecordMarks) {
        if let rule { rules.append(rule) }
        offsets.append(offset)
        end = marks
    }
}
