import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

private func tick(_ line: String) -> Tick? {
    try? TickLineParser.parse(line).get()
}

private func error(_ line: String) -> String? {
    if case .failure(let e) = TickLineParser.parse(line) { return e.message }
    return nil
}

@Suite struct TickLineParserGoodLines {
    @Test func specExample() {
        #expect(
            tick(#"{"time": 1700000000000, "symbol": "BTC", "price": 43000.5, "change24h": -1.25}"#)
                == Tick(time: 1_700_000_000_000, symbol: "BTC", price: 43000.5, change24h: -1.25))
    }

    @Test func rfc3339Times() {
        #expect(tick(#"{"time":"2023-11-14T22:13:20Z","symbol":"BTC","price":1}"#)?.time == 1_700_000_000_000)
        #expect(tick(#"{"time":"2023-11-14T22:13:20.123Z","symbol":"BTC","price":1}"#)?.time == 1_700_000_000_123)
        #expect(tick(#"{"time":"2023-11-15T00:13:20.5+02:00","symbol":"BTC","price":1}"#)?.time == 1_700_000_000_500)
        #expect(tick(#"{"time":"2023-11-14T21:13:20-01:00","symbol":"BTC","price":1}"#)?.time == 1_700_000_000_000)
        #expect(tick(#"{"time":"2023-11-14T22:13:20.999999Z","symbol":"BTC","price":1}"#)?.time == 1_700_000_000_999)
    }

    @Test func change24hPresentNullAbsent() {
        #expect(tick(#"{"time":1,"symbol":"A","price":1,"change24h":2.5}"#)?.change24h == 2.5)
        #expect(tick(#"{"time":1,"symbol":"A","price":1,"change24h":null}"#)?.change24h == nil)
        #expect(tick(#"{"time":1,"symbol":"A","price":1,"change24h":null}"#) != nil)
        #expect(tick(#"{"time":1,"symbol":"A","price":1}"#) == Tick(time: 1, symbol: "A", price: 1))
    }

    @Test func keysInAnyOrderAndWhitespace() {
        let expected = Tick(time: 5, symbol: "ETH", price: 2, change24h: 1)
        #expect(tick(#"{"change24h":1,"price":2,"symbol":"ETH","time":5}"#) == expected)
        #expect(tick(" \t{ \"price\" :2 ,\r\"time\"\t: 5,\n\"symbol\": \"ETH\" , \"change24h\" : 1 } \t") == expected)
    }

    @Test func unknownKeysOfEveryTypeAreSkipped() {
        let line =
            #"{"a":{"b":[1,{"c":"}]\"x"},[],{}],"d":null},"time":1,"e":[true,false,null,-0.5e+3,"\u00e9\n"],"symbol":"S","f":"p\"rice","price":3,"g":{}}"#
        #expect(tick(line) == Tick(time: 1, symbol: "S", price: 3))
    }

    @Test func escapedStrings() {
        #expect(tick(#"{"time":1,"symbol":"B\"T\\C\/\u0041\n","price":1}"#)?.symbol == "B\"T\\C/A\n")
        #expect(tick(#"{"time":1,"symbol":"\ud83d\ude00 \u00e9","price":1}"#)?.symbol == "😀 é")
        #expect(tick(#"{"time":1,"symbol":"€uro","price":1}"#)?.symbol == "€uro")
        #expect(tick(#"{"t\u0069me":1,"symbol":"A","pr\u0069ce":7}"#)?.price == 7)
        #expect(tick(#"{"time":1,"symbol":"","price":1}"#)?.symbol == "")
    }

    @Test func exponentNumbers() {
        #expect(tick(#"{"time":1,"symbol":"A","price":6.3e-9}"#)?.price == 6.3e-9)
        #expect(tick(#"{"time":1,"symbol":"A","price":1.0E-5}"#)?.price == 1.0e-5)
        #expect(tick(#"{"time":1,"symbol":"A","price":2E+3}"#)?.price == 2000)
        #expect(tick(#"{"time":1,"symbol":"A","price":0.000001234}"#)?.price == 0.000001234)
        #expect(tick(#"{"time":1,"symbol":"A","price":1e400}"#)?.price == .infinity)
        #expect(tick(#"{"time":1,"symbol":"A","price":12345678901234567890123}"#)?.price == 12345678901234567890123.0)
    }

    @Test func nonNumberPriceIsNaNAndBadNumbersAreKept() {
        for price in [#""43000""#, "null", "true", "false", "{}", "[1]"] {
            #expect(tick(#"{"time":1,"symbol":"A","price":\#(price)}"#)?.price.isNaN == true, "price \(price)")
        }
        #expect(tick(#"{"time":1,"symbol":"A","price":0}"#)?.price == 0)
        #expect(tick(#"{"time":1,"symbol":"A","price":-1}"#)?.price == -1)
        #expect(tick(#"{"time":1,"symbol":"A","price":-0}"#)?.price.sign == .minus)
    }

    @Test func negativeAndLargeIntegerTimes() {
        #expect(tick(#"{"time":-1000,"symbol":"A","price":1}"#)?.time == -1000)
        #expect(tick(#"{"time":999999999999999999,"symbol":"A","price":1}"#)?.time == 999_999_999_999_999_999)
    }

    @Test func randomDoublesMatchStandardLibrary() {
        var generator = SystemRandomNumberGenerator()
        var texts: [String] = []
        for _ in 0..<20_000 {
            let bits = generator.next() as UInt64
            texts.append(Double(bitPattern: bits & 0x7FEF_FFFF_FFFF_FFFF).description) // finite, positive
            texts.append("\(Double.random(in: 0.0001...200_000, using: &generator))")
            // Decimal text with 1–22 digits, a point anywhere and an exponent: hits both paths.
            let count = Int.random(in: 1...22, using: &generator)
            var digits = (0..<count).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
            while digits.count > 1, digits.hasPrefix("0") { digits.removeFirst() }
            let point = Int.random(in: 1...digits.count, using: &generator)
            var text = String(digits.prefix(point))
            if point < digits.count { text += "." + digits.dropFirst(point) }
            texts.append("\(text)e\(Int.random(in: -40...40, using: &generator))")
            texts.append("-\(text)")
        }
        var mismatches: [String] = []
        for text in texts {
            let parsed = tick(#"{"time":1,"symbol":"A","price":\#(text)}"#)?.price
            if parsed?.bitPattern != Double(text)?.bitPattern { mismatches.append(text) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test func otherEntryPoints() throws {
        let line = #"{"time":1,"symbol":"A","price":2}"#
        let expected = Tick(time: 1, symbol: "A", price: 2)
        #expect(try TickLineParser.parse(Array(line.utf8)).get() == expected)
        let padded = "xx" + line + "yy"
        #expect(try TickLineParser.parse(padded.dropFirst(2).dropLast(2)).get() == expected)
    }
}

@Suite struct TickLineParserMalformedLines {
    @Test func missingFields() {
        #expect(error(#"{"symbol":"A","price":1}"#) == #"missing "time""#)
        #expect(error(#"{"time":1,"price":1}"#) == #"missing "symbol""#)
        #expect(error(#"{"time":1,"symbol":"A"}"#) == #"missing "price""#)
        #expect(error("{}") == #"missing "time""#)
    }

    @Test func badTime() {
        let message = #""time" must be epoch milliseconds or an RFC 3339 string"#
        for time in [
            "1.5", "1e3", "null", "true", #""yesterday""#, #""2023-11-14""#, "[1]", "{}",
            "99999999999999999999"
        ] {
            #expect(error(#"{"time":\#(time),"symbol":"A","price":1}"#) == message, "time \(time)")
        }
    }

    @Test func badSymbolAndChange() {
        #expect(error(#"{"time":1,"symbol":5,"price":1}"#) == #""symbol" must be a string"#)
        #expect(error(#"{"time":1,"symbol":null,"price":1}"#) == #""symbol" must be a string"#)
        #expect(
            error(#"{"time":1,"symbol":"A","price":1,"change24h":"2"}"#) == #""change24h" must be a number or null"#)
        #expect(
            error(#"{"time":1,"symbol":"A","price":1,"change24h":true}"#) == #""change24h" must be a number or null"#)
    }

    @Test func duplicateKeys() {
        #expect(error(#"{"time":1,"symbol":"A","price":1,"price":2}"#) == #"duplicate key "price""#)
        #expect(error(#"{"time":1,"time":1,"symbol":"A","price":1}"#) == #"duplicate key "time""#)
    }

    @Test func syntaxErrorsNameTheColumn() {
        #expect(error("") == "expected '{', found end of line, at column 1")
        #expect(error("[1]") == "expected '{' at column 1")
        #expect(error(#"{"time":1,"symbol":"A","price":1} x"#) == "unexpected text after the object at column 35")
        #expect(error(#"{"time":1, symbol:"A"}"#) == #"expected '"' at column 12"#)
        #expect(error(#"{"time" 1}"#) == "expected ':' at column 9")
        #expect(error(#"{"time":1 "symbol":"A"}"#) == "expected ',' or '}' at column 11")
        #expect(error(#"{"time":1,"symbol":"A""#) == "expected ',' or '}', found end of line, at column 23")
        #expect(error(#"{"time":1,"symbol":"A","price":1,}"#) == #"expected '"' at column 34"#)
        #expect(error(#"{"time":1,"symbol":"A","price":01}"#) == "expected ',' or '}' at column 33")
        #expect(error(#"{"time":1,"symbol":"A","price":1.}"#) == "invalid number at column 32")
        #expect(error(#"{"time":1,"symbol":"A","price":-}"#) == "invalid number at column 32")
        #expect(error(#"{"time":1,"symbol":"A","price":nul}"#) == "expected a JSON value at column 32")
        #expect(error(#"{"time":1,"symbol":"A\x","price":1}"#) == "invalid escape in string at column 22")
        #expect(error(#"{"time":1,"symbol":"A\u00g1","price":1}"#) == "invalid \\u escape in string at column 22")
        #expect(error("{\"time\":1,\"symbol\":\"A\tB\",\"price\":1}") == "control character in string at column 22")
        #expect(error(#"{"time":1,"symbol":"A"#) == "unterminated string at column 20")
        #expect(error(#"{"x":[1 2],"time":1,"symbol":"A","price":1}"#) == "expected ',' or ']' at column 9")
        #expect(error(#"{"x":{"a" 1},"time":1,"symbol":"A","price":1}"#) == "expected ':' at column 11")
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(error(#"{"x":\#(deep),"time":1,"symbol":"A","price":1}"#) == "nested too deeply at column 70")
    }

    @Test func readmeSnippetIsNotATick() throws {
        let text = try String(contentsOfFile: fixturesFolder + "/btse_coinIndex_README_snippet.txt", encoding: .utf8)
        #expect(error(text) != nil)
        // Even joined onto one line, the snippet is not valid JSON (`"type: 1` lacks a quote).
        #expect(error(text.split(separator: "\n").joined(separator: " ")) != nil)
    }
}
