import AlertCore

/// The top level of a rule file: `version`, `rules`, `sinks`, `defaults` (spec §1).
extension FileChecker {
    static let topLevelKeys = ["version", "rules", "sinks", "defaults"]

    /// The file's valid rules and sinks; what is invalid is reported and left out.
    mutating func ruleFile(_ root: JSONNode) -> (rules: [Rule], sinks: [SinkDefinition]) {
        guard let members = object(root, "a rule file") else { return ([], []) }
        let suggested = checkKeys(members, allowed: Self.topLevelKeys)
        if let version = requireKey("version", in: root, members, suggested: suggested) { checkVersion(version.value) }
        let fileSinks = members["sinks"].map { self.sinks($0.value) } ?? []
        let fileDefaults = members["defaults"].map { self.defaults($0.value) } ?? RuleDefaults()
        guard let list = requireKey("rules", in: root, members, suggested: suggested),
              let elements = array(list.value, "'rules'") else { return ([], fileSinks) }
        let rules = elements.compactMap { rule($0, defaults: fileDefaults) }
        return (rules, fileSinks)
    }

    private mutating func checkVersion(_ node: JSONNode) {
        guard case .number(let text) = node.value else {
            error("'version' must be the number 1, found \(node.value.typeName)", at: node.position)
            return
        }
        if Double(text) != 1 { error("'version' must be 1, found \(text)", at: node.position) }
    }
}
