import AlertHTTP
import Testing

/// What a connection takes from a URL: host, port, request path, Host header, TLS.
@Suite struct URLTargetTests {
    @Test func defaultPortsAndPaths() throws {
        let plain = try #require(URLTarget("http://api.example.com", schemes: .http))
        #expect(!plain.secure && plain.host == "api.example.com" && plain.port == 80 && plain.path == "/")
        #expect(plain.hostHeader == "api.example.com" && !plain.isAddress && !plain.hasUserInfo)
        let secure = try #require(URLTarget("https://api.example.com?x=1#frag", schemes: .http))
        #expect(secure.secure && secure.port == 443 && secure.path == "/?x=1")
        let socket = try #require(URLTarget("wss://ws.example.com:9443/ws/futures", schemes: .websocket))
        #expect(
            socket.secure && socket.port == 9443 && socket.path == "/ws/futures"
                && socket.hostHeader == "ws.example.com:9443")
    }

    @Test func addressesUserInfoAndFragments() throws {
        let v6 = try #require(URLTarget("http://[::1]:8080/a/b?c=d#e", schemes: .http))
        #expect(
            v6.host == "::1" && v6.port == 8080 && v6.isAddress && v6.path == "/a/b?c=d"
                && v6.hostHeader == "[::1]:8080")
        let v4 = try #require(URLTarget("http://user:pw@127.0.0.1:81/x", schemes: .http))
        #expect(v4.isAddress && v4.hasUserInfo && v4.hostHeader == "127.0.0.1:81" && v4.host == "127.0.0.1")
    }

    @Test(arguments: ["ftp://h/x", "ws://h/x", "http://", "http://h:port/", "http://h:70000/", "http://[::1/", "h/x"])
    func notAConnectableHTTPURL(_ url: String) {
        #expect(URLTarget(url, schemes: .http) == nil)
    }
}
