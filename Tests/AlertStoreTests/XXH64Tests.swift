@testable import AlertStore
import Testing

/// XXH64 against published values (xxHash's own, python-xxhash's and ClickHouse's tests): short
/// inputs, each tail length, seeds, and inputs of 32 bytes and more (the four-lane path).
@Suite struct XXH64Tests {
    @Test(arguments: [
        ("", 0, 0xEF46_DB37_51D8_E999),
        ("a", 0, 0xD24E_C4F1_A98C_6E5B),
        ("abc", 0, 0x44BC_2CF5_AD77_0999),
        ("ABC", 0, 0xE66A_E735_4FCF_EE98),
        ("xxhash", 0, 0x32DD_3895_2C4B_C720),
        ("abcdefghijklmnopqrstuvwxyz12345", 0, 0x4676_0590_1B01_D6F6),
        ("", 668_718_853, 0x04E8_3058_2A31_A119),
        ("a", 191_961_062, 0x6E05_BA28_87C9_7977),
        ("abcdefghijklmnopqrstuvwxyz12345", 877_380_273, 0x37B5_62EC_5715_E132),
        ("Nobody inspects the spammish repetition", 0, 0xFBCE_A83C_8A37_8BF1),
    ] as [(String, UInt64, UInt64)])
    func publishedValues(input: String, seed: UInt64, expected: UInt64) {
        #expect(XXH64.hash(Array(input.utf8), seed: seed) == expected)
    }

    @Test func everyByteCounts() {
        let base = Array("Nobody inspects the spammish repetition, twice over: nobody inspects it.".utf8)
        let hash = XXH64.hash(base)
        for i in base.indices {
            var changed = base
            changed[i] ^= 1
            #expect(XXH64.hash(changed) != hash, "byte \(i)")
        }
        #expect(XXH64.hash(base.dropLast().map { $0 }) != hash)
    }
}
