/// XXH64 (Yann Collet's xxHash, 64-bit, https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md):
/// a fast non-cryptographic hash, for telling whether bytes changed (the rules cache's key).
/// Much faster than SHA-256 for this (see Docs/performance.md); a changed file gives the same
/// value with chance 2^-64. Not for anything an attacker chooses to collide: who can edit the
/// rule files or the state folder can write any rules anyway.
enum XXH64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        var offset = 0
        var acc: UInt64
        func word(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        if count >= 32 {
            var v1 = seed &+ prime1 &+ prime2, v2 = seed &+ prime2, v3 = seed, v4 = seed &- prime1
            while offset + 32 <= count {
                v1 = round(v1, word(offset))
                v2 = round(v2, word(offset + 8))
                v3 = round(v3, word(offset + 16))
                v4 = round(v4, word(offset + 24))
                offset += 32
            }
            acc = v1.rotated(1) &+ v2.rotated(7) &+ v3.rotated(12) &+ v4.rotated(18)
            acc = merge(merge(merge(merge(acc, v1), v2), v3), v4)
        } else {
            acc = seed &+ prime5
        }
        acc &+= UInt64(count)
        while offset + 8 <= count {
            acc ^= round(0, word(offset))
            acc = acc.rotated(27) &* prime1 &+ prime4
            offset += 8
        }
        if offset + 4 <= count {
            acc ^= UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) &* prime1
            acc = acc.rotated(23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            acc ^= UInt64(bytes[offset]) &* prime5
            acc = acc.rotated(11) &* prime1
            offset += 1
        }
        acc ^= acc >> 33
        acc &*= prime2
        acc ^= acc >> 29
        acc &*= prime3
        acc ^= acc >> 32
        return acc
    }

    static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        (acc &+ input &* prime2).rotated(31) &* prime1
    }

    private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* prime1 &+ prime4
    }
}

private extension UInt64 {
    func rotated(_ bits: UInt64) -> UInt64 { (self << bits) | (self >> (64 - bits)) }
}
