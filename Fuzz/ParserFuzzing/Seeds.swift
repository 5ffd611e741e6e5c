import Foundation

/// The seeds of one parser, read at run time from the repository and the fixtures folder.
enum Seeds {
    /// A seed file larger than this is replaced by cut-down copies (`JSONCut`), so a million
    /// inputs take minutes, not hours; its shape and its values are kept.
    static let maxSeedBytes = 32 << 10
    /// The most lines one line-per-input file contributes.
    static let maxLines = 64

    struct Missing: Error, CustomStringConvertible {
        var path: String
        var description: String { "\(path): cannot read seed file" }
    }

    static func load(_ target: FuzzTarget, repository: String, fixtures: String) throws -> [[UInt8]] {
        var seeds = target.builtInSeeds.map { Array($0.utf8) }
        for file in target.seedFiles {
            switch file {
            case .whole(let path): seeds += cutDown(try read(repository + "/" + path))
            case .fixture(let path): seeds += cutDown(try read(fixtures + "/" + path))
            case .lines(let path): seeds += lines(try read(repository + "/" + path))
            case .fixtureLines(let path): seeds += lines(try read(fixtures + "/" + path))
            case .folder(let path):
                let folder = repository + "/" + path
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
                    throw Missing(path: folder)
                }
                for name in names.sorted() { seeds += cutDown(try read(folder + "/" + name)) }
            }
        }
        return seeds
    }

    private static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Missing(path: path) }
        return Array(data)
    }

    private static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
        Array(bytes.split(separator: 0x0A, omittingEmptySubsequences: true).prefix(maxLines).map(Array.init))
    }

    private static func cutDown(_ bytes: [UInt8]) -> [[UInt8]] {
        guard bytes.count > maxSeedBytes else { return [bytes] }
        let cuts = [1, 3, 8].compactMap { JSONCut.keepingFirst($0, of: bytes) }.filter { $0.count <= maxSeedBytes }
        return cuts.isEmpty ? [Array(bytes.prefix(maxSeedBytes))] : cuts
    }
}

/// A JSON text with every list of records (an array or object whose members are all arrays or
/// objects: market lists, ticker tables) cut to its first `keep` members; everything else is
/// copied byte for byte. Nil for text that is not JSON or nests deeper than 256.
enum JSONCut {
    static func keepingFirst(_ keep: Int, of bytes: [UInt8]) -> [UInt8]? {
        var cutter = Cutter(bytes: bytes, keep: keep)
        guard let value = cutter.value(depth: 0) else { return nil }
        return value
    }

    private struct Cutter {
        let bytes: [UInt8]
        let keep: Int
        var i = 0

        mutating func skipWhitespace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 {
                i += 1
            }
        }

        mutating func value(depth: Int) -> [UInt8]? {
            skipWhitespace()
            guard i < bytes.count, depth < 256 else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["): return container(depth: depth)
            case UInt8(ascii: "\""): return string()
            default:
                let start = i
                while i < bytes.count, !",]} \n\r\t".utf8.contains(bytes[i]) { i += 1 }
                return i > start ? Array(bytes[start..<i]) : nil
            }
        }

        mutating func string() -> [UInt8]? {
            let start = i
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
            guard i < bytes.count else { return nil }
            i += 1
            return Array(bytes[start..<i])
        }

        mutating func container(depth: Int) -> [UInt8]? {
            let open = bytes[i]
            let close = open == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            i += 1
            var members: [[UInt8]] = []
            var allContainers = true
            skipWhitespace()
            if i < bytes.count, bytes[i] == close {
                i += 1
                return [open, close]
            }
            while true {
                var member: [UInt8] = []
                if open == UInt8(ascii: "{") {
                    skipWhitespace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipWhitespace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
                    i += 1
                    member = key + [UInt8(ascii: ":")]
                }
                guard let item = value(depth: depth + 1) else { return nil }
                allContainers = allContainers && (item.first == UInt8(ascii: "{") || item.first == UInt8(ascii: "["))
                members.append(member + item)
                skipWhitespace()
                guard i < bytes.count else { return nil }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                guard bytes[i] == close else { return nil }
                i += 1
                break
            }
            let kept = allContainers && members.count > keep ? Array(members.prefix(keep)) : members
            return [open] + Array(kept.joined(separator: [UInt8(ascii: ",")])) + [close]
        }
    }
}
