import AlertModel

/// Version 3's top-level `sources` and qualified entries `source:SYMBOL` (rules v3 §2, §3;
/// Docs/rules.md#version-3).
extension FileChecker {
    static let sourceKeys = ["type", "endpoint"]

    /// The file's valid sources, in file order. Every name, valid or not, is recorded, so a
    /// qualified entry naming a broken source is not also told it is undefined.
    mutating func sources(_ node: JSONNode) -> [SourceDefinition] {
        guard let members = object(node, "'sources'") else { return [] }
        var sources: [SourceDefinition] = []
        for member in members {
            sourceNames.append(NamedPlace(name: member.key, position: member.keyPosition))
            let validName = SourceDefinition.isName(member.key)
            if !validName {
                error(
                    "source name must be 1 to 32 lowercase letters, digits or '-', found \(UserText.double(member.key))",
                    at: member.keyPosition)
            }
            if let source = source(member.key, member.value), validName { sources.append(source) }
        }
        return sources
    }

    private mutating func source(_ name: String, _ node: JSONNode) -> SourceDefinition? {
        guard let members = object(node, "source \(UserText.single(name))") else { return nil }
        var type: String?
        var endpoint: String?
        let clean = isClean { checker in
            let suggested = checker.checkKeys(members, allowed: Self.sourceKeys)
            type = checker.requireKey("type", in: node, members, suggested: suggested)
                .flatMap { checker.sourceType($0.value) }
            endpoint = members["endpoint"].flatMap { checker.endpoint($0.value) }
        }
        guard clean, let type else { return nil }
        return SourceDefinition(name: name, type: type, endpoint: endpoint)
    }

    private mutating func sourceType(_ node: JSONNode) -> String? {
        guard let text = string(node, "'type'") else { return nil }
        guard SourceDefinition.types.contains(text) else {
            let hint =
                Suggestion.closest(to: text, among: SourceDefinition.types).map { " (did you mean '\($0)'?)" }
                ?? " (known: " + SourceDefinition.types.joined(separator: ", ") + ")"
            error("unknown source type \(UserText.double(text))\(hint)", at: node.position)
            return nil
        }
        return text
    }

    /// An http:// or https:// base URL with something after the scheme. The URL itself is not
    /// repeated in the message: it may carry a key.
    private mutating func endpoint(_ node: JSONNode) -> String? {
        guard let text = nonEmptyString(node, "'endpoint'") else { return nil }
        let lower = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }), lower.count > scheme.count
        else {
            error("'endpoint' must be an http:// or https:// URL", at: node.position)
            return nil
        }
        return text
    }

    /// The key an entry names (rules v3 §3): in a version 3 file an entry holding `:` is
    /// qualified, `source:SYMBOL`, and its key is the source as written, `:`, and the symbol
    /// upper-cased (the source is checked once every file is read); any other entry's key is
    /// its symbol upper-cased. Nil after reporting a qualified entry with no source or symbol.
    mutating func key(_ entry: String, at position: SourceOffset) -> String? {
        guard version >= 3, let colon = entry.firstIndex(of: ":") else { return Symbol.normalize(entry) }
        let source = String(entry[..<colon])
        let symbol = String(entry[entry.index(after: colon)...])
        if source.isEmpty {
            error("\(UserText.double(entry)) needs a source name before ':' (source:SYMBOL)", at: position)
            return nil
        }
        sourceReferences.append(SourceReference(name: source, position: position, entry: entry))
        if symbol.isEmpty {
            error("\(UserText.double(entry)) needs a symbol after ':' (source:SYMBOL)", at: position)
            return nil
        }
        if symbol.hasPrefix("@") {
            error(
                "\(UserText.double(entry)): a source's symbol never starts with '@' (those are portfolio and series values)",
                at: position)
            return nil
        }
        return Tick.key(source: source, symbol: symbol)
    }
}
