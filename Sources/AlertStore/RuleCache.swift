import AlertModel
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `rules.cache` in the state folder: the rules of the rule files a `check` loaded last,
/// so that the next run over byte-identical files, by the same pricealert binary, takes them
/// from here instead of checking the files again (that is most of a cron run's time with
/// thousands of rules). Only rules are kept: sinks, with their URLs and keys, are always read
/// from the files.
///
/// A cache, nothing more: a file that is missing, damaged or made for other files or another
/// binary is a miss, and a file that cannot be written is left alone.
public struct RuleCache: Sendable {
    public let path: String

    public init(folder: StateFolder) {
        path = folder.path + "/rules.cache"
    }

    static let magic: [UInt8] = Array("pricealert rules cache 3\n".utf8)

    /// What the cache is valid for: this binary's identity (size, inode and modification time of
    /// `/proc/self/exe`: a rebuild or upgrade may check differently) and each file's length and
    /// SHA-256 of its bytes, in order (the same in every process). Nil when the binary cannot be
    /// identified (no caching).
    public static func key(files: [[UInt8]], executable: String = "/proc/self/exe") -> [UInt8]? {
        var info = stat()
        guard stat(executable, &info) == 0 else { return nil }
        var values = [
            Int64(info.st_size), Int64(info.st_ino), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec),
            Int64(files.count)
        ]
        var digests: [UInt8] = []
        for bytes in files {
            values.append(Int64(bytes.count))
            digests += SHA256.hash(data: bytes)
        }
        return littleEndian(values) + digests
    }

    /// `values` as 8 little-endian bytes each (the key, the rules' ends).
    private static func littleEndian(_ values: [Int64]) -> [UInt8] {
        values.flatMap { value in withUnsafeBytes(of: value.littleEndian, Array.init) }
    }

    /// What a cache holds: the rules, and where each file's `rules` array ends (`RuleSet.rulesEnds`).
    public struct Entry: Sendable, Equatable {
        public var rules: [Rule]
        public var rulesEnds: [Int?]

        public init(rules: [Rule], rulesEnds: [Int?]) {
            self.rules = rules
            self.rulesEnds = rulesEnds
        }
    }

    /// What the cache holds when it was written for `key`; nil otherwise.
    public func entry(for key: [UInt8]) -> Entry? {
        guard let bytes = FileManager.default.contents(atPath: path).map(Array.init),
            bytes.count > Self.magic.count + key.count,
            bytes.starts(with: Self.magic), bytes[Self.magic.count..<(Self.magic.count + key.count)].elementsEqual(key)
        else { return nil }
        var at = Self.magic.count + key.count
        func int64() -> Int64? {
            guard at + 8 <= bytes.count else { return nil }
            defer { at += 8 }
            return bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: Int64.self)) }
        }
        guard let count = int64(), count >= 0, count <= (bytes.count - at) / 8 else { return nil }
        var ends: [Int?] = []
        for _ in 0..<count {
            guard let end = int64() else { return nil }
            ends.append(end < 0 ? nil : Int(end))
        }
        guard let rules = try? Rule.decode(Array(bytes[at...])) else { return nil }
        return Entry(rules: rules, rulesEnds: ends)
    }

    /// Replaces the cache with `rules` (and where each file's rules end) for `key`, atomically (a
    /// temporary file renamed over it), so a reader sees the old cache or the new one. Returns
    /// whether it was written.
    @discardableResult
    public func store(_ rules: [Rule], rulesEnds: [Int?] = [], for key: [UInt8]) -> Bool {
        let ends = Self.littleEndian([Int64(rulesEnds.count)] + rulesEnds.map { Int64($0 ?? -1) })
        let bytes = Self.magic + key + ends + Rule.encode(rules)
        return (try? PrivateFile.replace(path, with: bytes)) != nil
    }
}
