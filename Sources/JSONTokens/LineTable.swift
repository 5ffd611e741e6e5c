/// A place in a text: 1-based line and column, columns counted in Unicode scalars (a tab
/// counts 1), so an editor's "go to line:column" lands on it.
public struct SourcePosition: Sendable, Equatable, Comparable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }

    public var description: String { "\(line):\(column)" }
}

/// The tokenizer's position mode: turns byte offsets of one text into 1-based lines and
/// columns, as editors number them: only LF starts a line (so CRLF files count as editors do),
/// and columns count Unicode scalars, i.e. bytes that are not UTF-8 continuation bytes (a tab
/// counts 1). A byte order mark is not a column. Only the few offsets a message names are ever
/// turned into places, so reading a big file counts no lines or columns at all.
public struct LineTable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The places of `offsets`, found in one pass over the text up to the last of them.
    public func positions(of offsets: some Sequence<Int>) -> [Int: SourcePosition] {
        var result: [Int: SourcePosition] = [:]
        var line = 1
        var column = 1
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        for offset in Set(offsets).sorted() {
            while i < offset, i < bytes.count {
                if bytes[i] == 0x0A {
                    line += 1
                    column = 1
                } else if bytes[i] & 0xC0 != 0x80 {
                    column += 1
                }
                i += 1
            }
            result[offset] = SourcePosition(line: line, column: column)
        }
        return result
    }

    public func position(of offset: Int) -> SourcePosition {
        positions(of: [offset])[offset]!
    }
}
