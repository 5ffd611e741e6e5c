/// Written here: shell globs of only `*` and `?` over whole strings, matched without a
/// regular-expression engine (none is in the package's dependencies for this).
public struct Glob: Sendable, Equatable, CustomStringConvertible {
    public let pattern: String
    private let scalars: [Unicode.Scalar]

    /// `*` matches any run of characters (also none), `?` exactly one; everything else itself.
    /// Refuses an empty pattern, white space and control characters, and the bracket and
    /// escape syntax of other globs (`[`, `]`, `{`, `}`, `\`), which would otherwise silently
    /// match only itself.
    public init(_ pattern: String) throws(GlobError) {
        guard !pattern.isEmpty else { throw GlobError(pattern: pattern, reason: "is empty") }
        for scalar in pattern.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.value < 0x20 || scalar.value == 0x7F {
                throw GlobError(pattern: pattern, reason: "holds white space or a control character")
            }
            if "[]{}\\".unicodeScalars.contains(scalar) {
                throw GlobError(pattern: pattern, reason: "holds '\(scalar)'; only '*' and '?' are wildcards")
            }
        }
        self.pattern = pattern
        scalars = Array(pattern.unicodeScalars)
    }

    public static let any = try! Glob("*")

    public var description: String { pattern }

    /// True when the whole of `text` matches. Backtracks only to the last `*`, so the cost is
    /// at most pattern length times text length.
    public func matches(_ text: String) -> Bool {
        let text = Array(text.unicodeScalars)
        var p = 0, t = 0
        var star: Int? = nil, resume = 0
        while t < text.count {
            if p < scalars.count, scalars[p] == "?" || scalars[p] == text[t] {
                p += 1
                t += 1
            } else if p < scalars.count, scalars[p] == "*" {
                star = p
                resume = t
                p += 1
            } else if let star {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < scalars.count, scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }
}

public struct GlobError: Error, Sendable, Equatable, CustomStringConvertible {
    public let pattern: String
    public let reason: String
    public var description: String { "pattern \"\(pattern)\" \(reason)" }
}
