import AlertCore

/// The top level of a rule file: `version`, `rules`, `sinks`, `defaults` (Docs/rules.md#file-structure).
extension FileChecker {
    static let topLevelKeys = ["version", "rules", "sinks", "defaults"]

    /// The file's valid rules and sinks; what is invalid is reported and left out. The rules
    /// come from `streamed` when the reader handed them over one by one.
    mutating func ruleFile(_ root: JSONNode) -> (rules: [Rule], sinks: [SinkDefinition]) {
        guard let members = object(root, "a rule file") else { return ([], []) }
        let suggested = checkKeys(members, allowed: Self.topLevelKeys)
        if let version = requireKey("version", in: root, members, suggested: suggested) { checkVersion(version.value) }
        let fileSinks = members["sinks"].map { self.sinks($0.value) } ?? []
        let defaultsNode = members["defaults"]?.value
        let fileDefaults: RuleDefaults
        if let streamed, let defaultsNode, streamed.defaultsAt == defaultsNode.position {
            fileDefaults = streamed.defaults
        } else {
            fileDefaults = defaultsNode.map { self.defaults($0) } ?? RuleDefaults()
        }
        guard let list = requireKey("rules", in: root, members, suggested: suggested),
              let elements = array(list.value, "'rules'") else { return ([], fileSinks) }
        guard let streamed else { return (elements.compactMap { rule($0, defaults: fileDefaults) }, fileSinks) }
        if streamed.defaultsAt == defaultsNode?.position { return (streamed.rules, fileSinks) }
        // `defaults` is written after `rules`: check the rules again, with it.
        forgetStreamedRules(streamed)
        let rules = streamed.offsets.compactMap { offset in
            JSONReader.value(in: lines.bytes, at: offset).flatMap { rule($0, defaults: fileDefaults) }
        }
        return (rules, fileSinks)
    }

    /// Checks and builds one element of the top-level `rules` as the reader hands it over;
    /// `before` are the top-level members read before `rules` (where `defaults` usually is).
    mutating func streamedRule(_ node: JSONNode, before: [JSONMember]) {
        if streamed == nil {
            let defaultsNode = before["defaults"]?.value
            let defaults = defaultsNode.map { self.defaults($0) } ?? RuleDefaults()
            streamed = StreamedRules(defaultsAt: defaultsNode?.position, defaults: defaults,
                                     problems: problems.count, ids: ruleIDs.count, references: sinkReferences.count)
        }
        let rule = rule(node, defaults: streamed!.defaults)
        streamed!.add(rule, at: node.position, problems: problems.count, ids: ruleIDs.count,
                      references: sinkReferences.count)
    }

    /// Takes back what checking the streamed rules reported and recorded.
    private mutating func forgetStreamedRules(_ streamed: StreamedRules) {
        problems.removeSubrange(streamed.problems)
        ruleIDs.removeSubrange(streamed.ids)
        sinkReferences.removeSubrange(streamed.references)
    }

    private mutating func checkVersion(_ node: JSONNode) {
        guard case .number(let text) = node.value else {
            error("'version' must be the number 1, found \(node.value.typeName)", at: node.position)
            return
        }
        if Double(text) != 1 { error("'version' must be 1, found \(UserText.escaped(text))", at: node.position) }
    }
}

/// The rules of a file checked while it was read (`FileChecker.streamedRule`), with what
/// checking them added to the checker, so they can be checked again if `defaults` turns out
/// to come after them.
struct StreamedRules {
    /// Where the `defaults` used starts (nil: the file had none before `rules`), and its value.
    var defaultsAt: SourceOffset?
    var defaults: RuleDefaults
    var rules: [Rule] = []
    /// Where each element of `rules` starts, valid or not.
    var offsets: [SourceOffset] = []
    /// The checker's problems, rule ids and sink references that the rules added.
    var problems: Range<Int>
    var ids: Range<Int>
    var references: Range<Int>

    init(defaultsAt: SourceOffset?, defaults: RuleDefaults, problems: Int, ids: Int, references: Int) {
        self.defaultsAt = defaultsAt
        self.defaults = defaults
        self.problems = problems..<problems
        self.ids = ids..<ids
        self.references = references..<references
    }

    mutating func add(_ rule: Rule?, at offset: SourceOffset, problems: Int, ids: Int, references: Int) {
        if let rule { rules.append(rule) }
        offsets.append(offset)
        self.problems = self.problems.lowerBound..<problems
        self.ids = self.ids.lowerBound..<ids
        self.references = self.references.lowerBound..<references
    }
}
