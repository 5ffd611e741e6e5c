import AlertHTTP
import AlertTestSupport
import Testing

/// Both clients against replies no client should read whole: huge, endless, dripping, header
/// floods, from a real server on 127.0.0.1.
@Suite(.programs) struct HostileReplyTests {
    @Test(arguments: Transport.allCases)
    func aRESTReplyOverTheLimitFailsNamingTheRedactedURL(_ transport: Transport) async throws {
        let client = transport.client
        let (port, result) = try await HostileReceiver.with { port in
            (
                port,
                await client.result(
                    HTTPRequest(
                        url: "http://127.0.0.1:\(port)/huge/3?token=s3cret", timeout: 60_000,
                        responseLimit: ResponseLimit(bytes: 1 << 20, truncates: false)))
            )
        }
        guard case .failure(let error) = result else { Issue.record("a 3 MiB reply passed a 1 MiB limit"); return }
        #expect(
            error.description
                == "http://127.0.0.1:\(port)/huge/…?…: response body larger than 1 MiB, the limit for this request")
        #expect(!error.description.contains("s3cret"))
    }

    @Test(arguments: Transport.allCases)
    func anEndlessRESTReplyStopsAtTheDefaultLimit(_ transport: Transport) async throws {
        let client = transport.client
        let result = try await HostileReceiver.with { port in
            await client.result(HTTPRequest(url: "http://127.0.0.1:\(port)/endless", timeout: 120_000))
        }
        guard case .failure(let error) = result else { Issue.record("an endless reply succeeded"); return }
        #expect(error.reason == "response body larger than 32 MiB, the limit for this request")
        #expect(ResponseLimit.rest.bytes == 32 << 20)
    }

    @Test(arguments: Transport.allCases)
    func aReplyWithinTheLimitIsReadWhole(_ transport: Transport) async throws {
        let client = transport.client
        let response = try await HostileReceiver.with { port in
            try await client.send(
                HTTPRequest(
                    url: "http://127.0.0.1:\(port)/huge/2", timeout: 60_000,
                    responseLimit: ResponseLimit(bytes: 2 << 20, truncates: false)))
        }
        #expect(response.status == 200)
        #expect(response.body.count == 2 << 20)
    }

    @Test(arguments: Transport.allCases, [200, 503])
    func anEndlessWebhookReplyKeepsItsStatusAndTheFirst64KiB(_ transport: Transport, status: Int) async throws {
        let client = transport.client
        let response = try await HostileReceiver.with { port in
            try await client.send(
                HTTPRequest(
                    method: "POST", url: "http://127.0.0.1:\(port)/endless?status=\(status)",
                    body: Array("{}".utf8), timeout: 120_000, responseLimit: .webhook))
        }
        #expect(response.status == status)
        #expect(response.body.count == 64 << 10)
    }

    @Test(arguments: Transport.allCases)
    func aDrippingReplyEndsAtTheTimeout(_ transport: Transport) async throws {
        let client = transport.client
        let result = try await HostileReceiver.with { port in
            await client.result(
                HTTPRequest(
                    method: "POST", url: "http://127.0.0.1:\(port)/drip", body: [1],
                    timeout: 1_000, responseLimit: .webhook))
        }
        guard case .failure(let error) = result else { Issue.record("a dripping reply succeeded"); return }
        #expect(error.kind == .timeout)
    }

    @Test(arguments: Transport.allCases)
    func aHeaderFloodFails(_ transport: Transport) async throws {
        let client = transport.client
        let result = try await HostileReceiver.with { port in
            await client.result(
                HTTPRequest(url: "http://127.0.0.1:\(port)/headers/2000", timeout: 60_000, responseLimit: .webhook))
        }
        guard case .failure(let error) = result else { Issue.record("2000 headers of 200 bytes were read"); return }
        #expect(error.reason == "response headers larger than 256 KiB")
    }
}
