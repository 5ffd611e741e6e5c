// A trick kept for what it buys (Docs/performance.md#encoding-alert-events): the alert encoder
// writes through a pointer into capacity it reserved for the whole event
// (`Array.append(addingCapacity:initializingWith:)`), sized from an upper bound of the event's
// length, instead of one `append(contentsOf:)` per piece, each of which checks uniqueness and
// capacity and goes through a generic copy. `String(n)` and a `String` per number are avoided
// for the same reason.

extension Array where Element == UInt8 {
    /// Appends the bytes `body` writes, at most `maxCount` of them (checked).
    @inline(__always)
    mutating func write(atMost maxCount: Int, _ body: (inout ReservedWriter) -> Void) {
        append(addingCapacity: maxCount) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                var writer = ReservedWriter(buffer.baseAddress!)
                body(&writer)
                initialized = writer.next - buffer.baseAddress!
                precondition(initialized <= maxCount, "wrote past the bytes reserved")
            }
        }
    }

    /// Appends the bytes of an ASCII (or any UTF-8) literal.
    @inline(__always)
    mutating func appendLiteral(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `text`'s UTF-8 bytes through its contiguous storage.
    @inline(__always)
    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
}

/// Writes bytes at `next` and moves it on. The caller reserved room for all of them (see
/// `Array.write(atMost:_:)`); each method's comment says how many bytes it may write.
struct ReservedWriter {
    private(set) var next: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) {
        next = start
    }

    /// Moves on past `count` bytes written at `next` directly.
    @inline(__always)
    mutating func skip(_ count: Int) {
        next += count
    }

    @inline(__always)
    mutating func byte(_ byte: UInt8) {
        next.pointee = byte
        next += 1
    }

    /// `bytes.count` bytes.
    @inline(__always)
    mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        next.update(from: base, count: bytes.count)
        next += bytes.count
    }

    /// `text.utf8CodeUnitCount` bytes.
    @inline(__always)
    mutating func literal(_ text: StaticString) {
        next.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        next += text.utf8CodeUnitCount
    }

    /// `text.utf8.count` bytes.
    @inline(__always)
    mutating func utf8(_ text: String) {
        var text = text
        text.withUTF8 { bytes($0) }
    }

    /// At most 6 bytes for each of `text`'s: the inside of a JSON string (RFC 8259's escapes).
    mutating func escaped(_ text: UnsafeBufferPointer<UInt8>) {
        guard let base = text.baseAddress else { return }
        // Bytes of multi-byte characters are all >= 0x80: only ASCII ever needs an escape.
        var run = 0
        for i in 0..<text.count {
            let byte = base[i]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            next.update(from: base + run, count: i - run)
            next += i - run
            run = i + 1
            switch byte {
            case UInt8(ascii: "\""): literal(#"\""#)
            case UInt8(ascii: "\\"): literal(#"\\"#)
            case UInt8(ascii: "\n"): literal(#"\n"#)
            case UInt8(ascii: "\r"): literal(#"\r"#)
            case UInt8(ascii: "\t"): literal(#"\t"#)
            default:
                let hex: StaticString = "0123456789abcdef"
                literal(#"\u00"#)
                self.byte(hex.utf8Start[Int(byte >> 4)])
                self.byte(hex.utf8Start[Int(byte & 0xF)])
            }
        }
        next.update(from: base + run, count: text.count - run)
        next += text.count - run
    }

    /// At most `6 * text.utf8.count` bytes.
    @inline(__always)
    mutating func escaped(_ text: String) {
        var text = text
        text.withUTF8 { escaped($0) }
    }

    /// At most 20 bytes.
    mutating func decimal(_ value: Int64) {
        var digits = DecimalDigits(value)
        digits.withBytes { bytes($0) }
    }

    /// At most `NumberText.capacity` (32) bytes.
    mutating func number(_ text: NumberText) {
        text.withBytes { bytes($0) }
    }
}

/// The decimal digits of an `Int64` (at most 20 bytes with the sign), on the stack.
struct DecimalDigits {
    private var storage: (UInt64, UInt64, UInt64) = (0, 0, 0)
    private var start = 24

    init(_ value: Int64) {
        var magnitude = value.magnitude
        var start = 24
        withUnsafeMutableBytes(of: &storage) { bytes in
            repeat {
                start -= 1
                bytes[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                bytes[start] = UInt8(ascii: "-")
            }
        }
        self.start = start
    }

    mutating func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let start = self.start
        return withUnsafeBytes(of: &storage) { raw in
            body(
                UnsafeBufferPointer(
                    start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + start, count: 24 - start))
        }
    }
}

/// A number's text as `JSONNumber` writes it, on the stack: Swift's shortest round-trip form of
/// a `Double` is at most 24 bytes (`-2.2250738585072014e-308`). The encoder formats a price
/// once for the event's `price` and again for its message from this.
struct NumberText {
    static let capacity = 32
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private(set) var count = 0

    init(_ value: Double) {
        if abs(value) < 1e15, Double(Int64(value)) == value {
            // Integral: no fraction. `Int64(-0.0)` is 0, so -0 is written "0".
            var digits = DecimalDigits(Int64(value))
            digits.withBytes { store($0) }
        } else if !value.isFinite {
            store("null")
        } else {
            store(value.description)
        }
    }

    private mutating func store(_ string: String) {
        var string = string
        string.withUTF8 { store($0) }
    }

    private mutating func store(_ buffer: UnsafeBufferPointer<UInt8>) {
        let n = min(buffer.count, Self.capacity)
        guard n > 0 else { return }
        withUnsafeMutableBytes(of: &storage) { bytes in
            bytes.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: n)
        }
        count = n
    }

    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var storage = self.storage
        let count = self.count
        return withUnsafeBytes(of: &storage) { raw in
            body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
        }
    }

    func append(to out: inout [UInt8]) {
        withBytes { out.append(contentsOf: $0) }
    }

    var string: String {
        withBytes { String(decoding: $0, as: UTF8.self) }
    }
}
