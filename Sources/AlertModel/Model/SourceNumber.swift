import Synchronization

/// A tick's source (rules v3 §1) as a number, so that a `Tick` holds no second string and
/// copies as cheaply as a tick without a source (see `Tick.extras`). Each name is numbered on
/// its first use, once for the life of the process; equal numbers are equal names. A name is
/// never forgotten: the names are the rule files' sources and those the tick lines read give,
/// so the table holds at most the distinct names of the input.
public struct SourceNumber: Sendable, Equatable {
    /// 0 for none; n for the n-th name numbered.
    @usableFromInline let value: UInt32

    @inlinable init(value: UInt32) { self.value = value }

    /// `name`'s number (numbered now if it has none yet), or none for nil. A feed numbers its
    /// name once and gives the number to each of its ticks.
    public init(_ name: String?) {
        value = name.map { name in Self.table.withLock { $0.number(name) } } ?? 0
    }

    /// The name, nil for none.
    @inlinable
    public var name: String? { value == 0 ? nil : Self.name(value) }

    @usableFromInline
    static func name(_ value: UInt32) -> String {
        table.withLock { $0.names[Int(value) - 1] }
    }

    private struct Table {
        var names: [String] = []
        var numbers: [String: UInt32] = [:]

        mutating func number(_ name: String) -> UInt32 {
            if let known = numbers[name] { return known }
            names.append(name)
            let number = UInt32(names.count)
            numbers[name] = number
            return number
        }
    }

    private static let table = Mutex(Table())
}
