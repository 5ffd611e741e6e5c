import SeededRandom

/// Turns a seed into a hostile variant: byte flips, truncation, deep nesting, huge numbers and
/// strings, invalid UTF-8, bad escapes, duplicate keys, splices of other seeds. Written here
/// because no package in use mutates inputs; the choices depend only on the generator, so an
/// input is named by its seed and index.
struct Mutator {
    /// The most bytes an input may have; longer results are cut, so memory stays bounded.
    static let maxInputBytes = 4 << 20

    let seeds: [[UInt8]]

    func mutate(_ input: [UInt8], rng: inout SeededRandom) -> [UInt8] {
        var bytes = input
        for _ in 0...rng.below(4) { apply(rng.below(14), to: &bytes, rng: &rng) }
        if bytes.count > Self.maxInputBytes { bytes.removeSubrange(Self.maxInputBytes...) }
        return bytes
    }

    private func apply(_ operation: Int, to bytes: inout [UInt8], rng: inout SeededRandom) {
        switch operation {
        case 0: // flip one bit
            guard !bytes.isEmpty else { return }
            bytes[rng.below(bytes.count)] ^= 1 << UInt8(rng.below(8))
        case 1: // a byte JSON cares about
            guard !bytes.isEmpty else { return }
            bytes[rng.below(bytes.count)] = Self.interestingBytes[rng.below(Self.interestingBytes.count)]
        case 2: // delete a few bytes
            guard !bytes.isEmpty else { return }
            let start = rng.below(bytes.count)
            bytes.removeSubrange(start..<min(bytes.count, start + 1 + rng.below(16)))
        case 3: // truncate
            guard !bytes.isEmpty else { return }
            bytes.removeSubrange(rng.below(bytes.count)...)
        case 4: // repeat a piece
            guard !bytes.isEmpty else { return }
            let start = rng.below(bytes.count)
            let piece = bytes[start..<min(bytes.count, start + 1 + rng.below(64))]
            let copies = rng.below(8) == 0 ? 1 + rng.below(1000) : 1
            insert(Array(repeatElement(piece, count: copies).joined()), into: &bytes, rng: &rng)
        case 5: // deep nesting
            let depth = depth(rng: &rng)
            let open: [UInt8] = [Array("[".utf8), Array(#"{"a":"#.utf8), Array(#"{"data":["#.utf8)][rng.below(3)]
            var nest = Array(repeatElement(open, count: depth).joined())
            if rng.below(2) == 0 { nest += Array(repeatElement(Array("]".utf8), count: depth).joined()) }
            insert(nest, into: &bytes, rng: &rng)
        case 6: // a huge or odd number, in place of one
            replaceToken(
                in: &bytes, with: Array(Self.numbers[rng.below(Self.numbers.count)].utf8), rng: &rng,
                where: { $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) })
        case 7: // a huge string
            let length = rng.below(16) == 0 ? 1 << 20 : rng.below(1 << 16)
            let fill = [UInt8(ascii: "a"), UInt8(ascii: "\\"), 0xC3, UInt8(ascii: "9")][rng.below(4)]
            insert(
                [UInt8(ascii: "\"")] + Array(repeating: fill, count: length) + [UInt8(ascii: "\"")], into: &bytes,
                rng: &rng)
        case 8: // invalid UTF-8
            insert(Self.badUTF8[rng.below(Self.badUTF8.count)], into: &bytes, rng: &rng)
        case 9: // a bad or odd escape
            insert(Array(Self.escapes[rng.below(Self.escapes.count)].utf8), into: &bytes, rng: &rng)
        case 10: // a key given twice
            duplicateMember(in: &bytes, rng: &rng)
        case 11: // splice a piece of another seed
            guard let other = seeds.isEmpty ? nil : seeds[rng.below(seeds.count)], !other.isEmpty else { return }
            let start = rng.below(other.count)
            let piece = Array(other[start..<min(other.count, start + 1 + rng.below(256))])
            if !bytes.isEmpty, rng.below(2) == 0 {
                let at = rng.below(bytes.count)
                bytes.replaceSubrange(at..<min(bytes.count, at + piece.count), with: piece)
            } else {
                insert(piece, into: &bytes, rng: &rng)
            }
        case 12: // another JSON value in place of one
            replaceToken(
                in: &bytes, with: Array(Self.values[rng.below(Self.values.count)].utf8), rng: &rng,
                where: {
                    [
                        UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "n"),
                        UInt8(ascii: "t"), UInt8(ascii: "f")
                    ].contains($0) || (0x30...0x39).contains($0)
                })
        default: // a random byte anywhere
            insert([UInt8(truncatingIfNeeded: rng.next())], into: &bytes, rng: &rng)
        }
    }

    /// Mostly shallow, sometimes thousands, rarely a hundred thousand levels.
    private func depth(rng: inout SeededRandom) -> Int {
        switch rng.below(64) {
        case 0: return 100_000
        case 1...8: return 1_000 + rng.below(9_000)
        default: return 1 + rng.below(64)
        }
    }

    private func insert(_ piece: [UInt8], into bytes: inout [UInt8], rng: inout SeededRandom) {
        bytes.insert(contentsOf: piece, at: rng.below(bytes.count + 1))
    }

    /// Replaces the token that starts at a random byte matching `starts` (scanning from a random
    /// place) up to the next structural byte; inserts `piece` when there is none.
    private func replaceToken(
        in bytes: inout [UInt8], with piece: [UInt8], rng: inout SeededRandom,
        where starts: (UInt8) -> Bool
    ) {
        guard !bytes.isEmpty else { bytes = piece; return }
        let from = rng.below(bytes.count)
        guard let start = bytes[from...].firstIndex(where: starts) ?? bytes[..<from].firstIndex(where: starts) else {
            insert(piece, into: &bytes, rng: &rng)
            return
        }
        let end = bytes[(start + 1)...].firstIndex { Self.structural.contains($0) } ?? bytes.count
        bytes.replaceSubrange(start..<end, with: piece)
    }

    /// Copies one `"key": value` member (up to the next `,` or `}`) right after itself.
    private func duplicateMember(in bytes: inout [UInt8], rng: inout SeededRandom) {
        guard bytes.count > 4 else { return }
        let from = rng.below(bytes.count - 1)
        let text = bytes
        let colon: (Int) -> Bool = { text[$0] == UInt8(ascii: "\"") && text[$0 + 1] == UInt8(ascii: ":") }
        guard let keyEnd = (from..<(text.count - 1)).first(where: colon) ?? (0..<from).first(where: colon),
            let keyStart = bytes[..<keyEnd].lastIndex(of: UInt8(ascii: "\""))
        else { return }
        let end = bytes[keyEnd...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") } ?? bytes.count
        bytes.insert(contentsOf: [UInt8(ascii: ",")] + bytes[keyStart..<end], at: end)
    }

    static let structural: Set<UInt8> = Set(",:]} \n".utf8)
    static let interestingBytes: [UInt8] = Array(#"{}[]",:\0-+.eE9 "#.utf8) + [0, 0x7F, 0x80, 0xFF, 0x0A, 0x0D, 0x09]
    static let numbers = [
        String(repeating: "9", count: 400), "1e999999999", "-1e-999999999", "1E400", "-0", "-0.0", "0e0",
        "18446744073709551616", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
        "1.7976931348623157e309", "4.9e-325", "0." + String(repeating: "0", count: 5000) + "1", "00012", "-", "1.",
        ".5", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity", "1_000", "１",
        "106751991167d", "9223372036854775807ms", "\"9223372036854775807ms\"", "\"106751991167d\"", "\"1e308s\""
    ]
    static let values = [
        "null", "true", "false", "[]", "{}", "\"\"", "[[[[]]]]", #"{"":""}"#, #""\u0000""#, "[null,null]", "-0",
        #""1e5""#, #""NaN""#, #""""#, "[1,2,3", #"{"a":1,"a":2}"#
    ]
    static let badUTF8: [[UInt8]] = [
        [0xC0, 0x80], [0xFF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80],
        [0x00], [0xF0, 0x9F, 0x98], [0xEF, 0xBB, 0xBF], [0xC3]
    ]
    static let escapes = [
        #"\u0000"#, #"\ud800"#, #"\uDFFF\uD800"#, #"\"#, #"\x"#, #"\u12"#, #"\uZZZZ"#, #"\/"#,
        #"\ud83d\ude00"#, "\u{202E}", "\u{1B}[31m", "\r\n", #"\u"#
    ]
}
