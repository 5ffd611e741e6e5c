/// One rule file's bytes, with the path as the user gave it (used verbatim in diagnostics).
public struct RuleSource: Sendable {
    public var path: String
    public var bytes: [UInt8]

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }
}
