import AlertModel
import Testing

@testable import DemoExchange

/// The look-alikes quote figures as exchanges do: a few significant digits, never a `Double`'s
/// 17, and never a nonzero figure as zero.
@Suite("look-alike figures")
struct QuotedFiguresTests {
    /// Significant digits of a number's text (`0.00001234` has 4, `43251.12` has 7).
    static func significantDigits(_ text: String) -> Int {
        let mantissa = text.split(separator: "e", maxSplits: 1)[0]
        let digits = mantissa.filter(\.isNumber).drop { $0 == "0" }
        return mantissa.contains(".") ? digits.count : digits.reversed().drop { $0 == "0" }.count
    }

    @Test("a random walk's figures are sent with at most 10 significant digits, within a digit's rounding")
    func randomFigures() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let x = Double.random(in: 1...10, using: &rng) * [1e-12, 1e-8, 1e-3, 1, 43_251, 1e9, 1e14].randomElement()!
            let text = VenueText.number(x)
            let sent = Double(text)!
            #expect(Self.significantDigits(text) <= VenueText.significantDigits, "\(x) → \(text)")
            #expect(abs(sent - x) <= abs(x) * 1e-9, "\(x) → \(text)")
            #expect(sent != 0)
        }
    }

    @Test("figures with 10 digits or fewer are sent as they are; longer ones rounded to 10")
    func shortFigures() {
        for (x, sent) in [
            (43_251.12, 43_251.12), (0.000_012_34, 0.000_012_34), (-4.265_927_69, -4.265_927_69), (0, 0),
            (16_038.287_709_38, 16_038.287_71), (1e15, 1e15), (0.123_456_789_012_345_6, 0.123_456_789_0)
        ] {
            #expect(Double(VenueText.number(x)) == sent, "\(x) → \(VenueText.number(x))")
            #expect(VenueText.string(x) == "\"\(VenueText.number(x))\"")
        }
    }
}
