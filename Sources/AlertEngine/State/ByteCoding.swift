import AlertModel

/// Little-endian writer for the state encodings (no Foundation in AlertEngine).
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func uint64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Empties the writer, keeping its buffer for the next use.
    mutating func clear() {
        bytes.removeAll(keepingCapacity: true)
    }

    mutating func append(_ other: ByteWriter) {
        bytes.append(contentsOf: other.bytes)
    }

    mutating func reserve(_ more: Int) {
        bytes.reserveCapacity(bytes.count + more)
    }

    mutating func int64(_ v: Int64) { uint64(UInt64(bitPattern: v)) }
    mutating func double(_ v: Double) { uint64(v.bitPattern) }

    mutating func count(_ n: Int) {
        let v = UInt32(n)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    mutating func string(_ s: String) {
        count(s.utf8.count)
        bytes.append(contentsOf: s.utf8)
    }

    /// A presence byte, then the value when there is one.
    mutating func optional(_ value: Int64?) {
        guard let value else { return byte(0) }
        byte(1)
        int64(value)
    }

    mutating func optional(_ value: Double?) {
        guard let value else { return byte(0) }
        byte(1)
        double(value)
    }
}

/// Reads what `ByteWriter` wrote; every read checks the bounds.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }
    var remaining: Int { bytes.count - offset }

    /// The offset of the next `n` bytes, which are then consumed.
    private mutating func advance(_ n: Int) throws(SnapshotError) -> Int {
        guard n >= 0, remaining >= n else { throw SnapshotError(reason: "symbol state is truncated") }
        defer { offset += n }
        return offset
    }

    mutating func byte() throws(SnapshotError) -> UInt8 { bytes[try advance(1)] }

    mutating func uint64() throws(SnapshotError) -> UInt64 {
        let at = try advance(8)
        return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    }

    mutating func int64() throws(SnapshotError) -> Int64 { Int64(bitPattern: try uint64()) }
    mutating func double() throws(SnapshotError) -> Double { Double(bitPattern: try uint64()) }

    /// What `ByteWriter.count` wrote, as a plain number (e.g. an index).
    mutating func uint32() throws(SnapshotError) -> Int {
        let at = try advance(4)
        return Int(
            bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) })
    }

    /// A count of items of at least `itemSize` bytes each, checked against what is left.
    mutating func count(itemSize: Int = 1) throws(SnapshotError) -> Int {
        let n = try uint32()
        guard n * itemSize <= remaining else { throw SnapshotError(reason: "symbol state is truncated") }
        return n
    }

    mutating func string() throws(SnapshotError) -> String {
        let n = try count()
        let at = try advance(n)
        return bytes.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[at..<(at + n)]), as: UTF8.self)
        }
    }

    mutating func optional<T>(_ read: (inout ByteReader) throws(SnapshotError) -> T) throws(SnapshotError) -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        case let other: throw SnapshotError(reason: "symbol state has a bad presence byte \(other)")
        }
    }
}
