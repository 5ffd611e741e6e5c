import AlertHTTP
import Testing

@Suite struct RedactedURLTests {
    @Test(arguments: [
        ("https://hooks.slack.com/services/T000/B000/XXXX", "https://hooks.slack.com/services/…"),
        ("https://api.telegram.org/bot123:ABC/sendMessage", "https://api.telegram.org/…"),
        ("https://discord.com/api/webhooks/123456/tok-EN", "https://discord.com/api/…"),
        ("https://user:pass@host/x?token=abc", "https://<redacted>@host/x?…"),
        ("http://127.0.0.1:8080/secret-token/x?key=SECRET", "http://127.0.0.1:8080/…?…"),
        ("http://[::1]:9000/hook#frag", "http://[::1]:9000/hook#…"),
        ("https://example.com", "https://example.com"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com?token=1", "https://example.com?…"),
        ("https://example.com:secret/x", "https://example.com:<redacted>/x"),
        ("https://h/ABCDEF123", "https://h/…"),
        ("not a url with SECRET", "<redacted>"),
        ("", "<redacted>")
    ])
    func redacts(url: String, expected: String) {
        #expect(RedactedURL.redact(url) == expected)
    }

    @Test func noTokenSurvives() {
        let urls = [
            "https://hooks.slack.com/services/T000/B000/TOKEN",
            "https://api.telegram.org/botTOKEN/sendMessage?chat_id=TOKEN",
            "https://user:TOKEN@host:1/TOKEN#TOKEN",
            "https://TOKEN@host"
        ]
        for url in urls { #expect(!RedactedURL.redact(url).contains("TOKEN"), "\(url)") }
    }
}
