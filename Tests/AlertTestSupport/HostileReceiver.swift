import HTTPTypes
import Hummingbird

/// An HTTP receiver on 127.0.0.1 that answers every request (any method, any path under the
/// routes below) with a reply no client should read whole:
/// - `/huge/{mib}`: `mib` MiB with a `Content-Length`;
/// - `/endless`: a chunked body that never ends (until the client goes away);
/// - `/drip`: a chunked body of one byte every 100 ms, forever;
/// - `/headers/{count}`: `count` headers of 200 bytes each, then `ok`.
/// `?status=N` sets the status (default 200).
public enum HostileReceiver {
    public static func with<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        try await LoopbackServer.with(router(), body)
    }

    static let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 << 10)

    private static func router() -> Router<BasicRequestContext> {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .put, .patch] {
            router.on("huge/:mib", method: method) { request, context in
                let mib = try context.parameters.require("mib", as: Int.self)
                _ = try await request.body.collect(upTo: 1 << 20)
                return Response(
                    status: status(request), headers: [.contentLength: String(mib << 20)],
                    body: ResponseBody(contentLength: mib << 20) { writer in
                        for _ in 0..<(mib * 16) { try await writer.write(chunk) }
                        try await writer.finish(nil)
                    })
            }
            router.on("endless", method: method) { request, _ in
                _ = try await request.body.collect(upTo: 1 << 20)
                return Response(
                    status: status(request),
                    body: ResponseBody { writer in
                        while true { try await writer.write(chunk) }
                    })
            }
            router.on("drip", method: method) { request, _ in
                _ = try await request.body.collect(upTo: 1 << 20)
                return Response(
                    status: status(request),
                    body: ResponseBody { writer in
                        while true {
                            try await writer.write(ByteBuffer(string: "."))
                            try await Task.sleep(for: .milliseconds(100))
                        }
                    })
            }
            router.on("headers/:count", method: method) { request, context in
                let count = try context.parameters.require("count", as: Int.self)
                _ = try await request.body.collect(upTo: 1 << 20)
                var headers = HTTPFields()
                let value = String(repeating: "v", count: 190)
                for i in 0..<count { headers[HTTPField.Name("x-flood-\(i)")!] = value }
                return Response(
                    status: status(request), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
            }
        }
        return router
    }

    private static func status(_ request: Request) -> HTTPResponse.Status {
        request.uri.queryParameters.get("status", as: Int.self).map { HTTPResponse.Status(code: $0) } ?? .ok
    }
}
