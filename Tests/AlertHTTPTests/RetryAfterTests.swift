import AlertHTTP
import Testing

@Suite struct RetryAfterTests {
    /// 2015-10-21T07:28:00Z in epoch milliseconds.
    let date: Int64 = 1_445_412_480_000

    @Test func deltaSeconds() {
        #expect(RetryAfter.delay(from: "2", now: 0) == 2000)
        #expect(RetryAfter.delay(from: " 120 ", now: 0) == 120_000)
        #expect(RetryAfter.delay(from: "0", now: 0) == 0)
    }

    @Test func httpDate() {
        #expect(RetryAfter.delay(from: "Wed, 21 Oct 2015 07:28:00 GMT", now: date - 5000) == 5000)
        #expect(RetryAfter.delay(from: "Thu, 01 Jan 1970 00:00:10 GMT", now: 0) == 10_000)
        #expect(RetryAfter.delay(from: "Tue, 29 Feb 2028 12:00:01 GMT", now: 1_835_438_400_000) == 1000)
    }

    @Test func pastDatesNegativesAndGarbageAreNil() {
        #expect(RetryAfter.delay(from: "Wed, 21 Oct 2015 07:28:00 GMT", now: date) == nil)
        #expect(RetryAfter.delay(from: "Wed, 21 Oct 2015 07:28:00 GMT", now: date + 1) == nil)
        for text in [
            nil, "", "-5", "1.5", "soon", "Wed, 21 Oct 2015 07:28:00 UTC", "Wed, 21 Foo 2015 07:28:00 GMT",
            "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed, 21 Oct 2015 25:28:00 GMT", "Wed, 32 Oct 2015 07:28:00 GMT"
        ] {
            #expect(RetryAfter.delay(from: text, now: 0) == nil, "\(text ?? "nil")")
        }
    }

    @Test func longWaitsAreCapped() {
        #expect(RetryAfter.delay(from: "86400", now: 0) == RetryAfter.cap)
        #expect(RetryAfter.delay(from: "99999999999999999999999", now: 0) == RetryAfter.cap)
        #expect(RetryAfter.delay(from: "Wed, 21 Oct 2015 07:28:00 GMT", now: 0) == RetryAfter.cap)
        #expect(RetryAfter.cap == 3_600_000)
    }
}
