import CCurl
import Synchronization

/// One request: its configured easy handle, the buffers libcurl writes into, and the task
/// waiting for it.
///
/// `@unchecked Sendable` because ownership passes hands exactly once: the sending task creates
/// and configures it and sets `continuation`, then hands it to the loop thread through
/// `CurlMultiLoop`'s mutex-protected queue (the mutex orders those writes before the loop's
/// reads). From then on only the loop thread touches the mutable fields, and what it gives back
/// through the continuation is a value. The one field another thread may touch afterwards is
/// `cancelRequested`, an atomic.
final class CurlTransfer: @unchecked Sendable {
    let id: UInt64
    let easy: UnsafeMutableRawPointer
    let redactedURL: String
    /// Set by the task's cancellation handler; read by the loop when it takes the transfer.
    let cancelRequested = Atomic<Bool>(false)
    var continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>?

    private let rawURL: String
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var responseHeaders: [(name: String, value: String)] = []
    private var body: [UInt8] = []

    init(id: UInt64, request: HTTPRequest) throws(HTTPError) {
        self.id = id
        self.rawURL = request.url
        self.redactedURL = RedactedURL.redact(request.url)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        guard let easy = curl_easy_init() else {
            errorBuffer.deallocate()
            throw HTTPError(kind: .other, url: redactedURL, reason: "curl_easy_init failed")
        }
        self.easy = easy
        try configure(request)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Builds the result from libcurl's `code` and resumes the waiting task. Loop thread only,
    /// after the handle left the multi handle (or never entered it).
    func complete(_ code: CURLcode) {
        if code == CURLE_OK {
            var status = 0
            var seconds = 0.0
            _ = pa_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            _ = pa_easy_getinfo_double(easy, CURLINFO_TOTAL_TIME, &seconds)
            finish(.success(HTTPResponse(status: status, headers: responseHeaders, body: body, duration: seconds)))
        } else {
            finish(.failure(HTTPError(curlCode: code, detail: String(cString: errorBuffer),
                                      rawURL: rawURL, redactedURL: redactedURL)))
        }
    }

    func fail(_ reason: String) {
        finish(.failure(HTTPError(kind: .other, url: redactedURL, reason: reason)))
    }

    private func finish(_ result: Result<HTTPResponse, HTTPError>) {
        continuation?.resume(returning: result)
        continuation = nil
    }

    // MARK: Callbacks (loop thread, inside curl_multi_perform)

    fileprivate func received(body data: UnsafeRawBufferPointer) {
        body.append(contentsOf: data)
    }

    /// One header line as libcurl hands it over, CRLF included. A status line starts a new
    /// response (after `100 Continue` or any other interim one), so the headers start over.
    fileprivate func received(headerLine line: UnsafeRawBufferPointer) {
        var bytes = line[...]
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes = bytes.dropLast() }
        if bytes.starts(with: "HTTP/".utf8) {
            responseHeaders.removeAll(keepingCapacity: true)
            return
        }
        guard let colon = bytes.firstIndex(of: 0x3A) else { return }
        let name = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        let value = bytes[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
        responseHeaders.append((name: name, value: String(decoding: value, as: UTF8.self)))
    }
}

// MARK: Configuration

extension CurlTransfer {
    static let userAgent = "pricealert/0.1"

    private func configure(_ request: HTTPRequest) throws(HTTPError) {
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(Self.isTokenByte) else {
            throw .invalid("invalid HTTP method", redactedURL: redactedURL)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        setopt(easy, CURLOPT_URL, request.url)
        setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        setopt(easy, CURLOPT_NOSIGNAL, 1)
        setopt(easy, CURLOPT_SSL_VERIFYPEER, 1)
        setopt(easy, CURLOPT_SSL_VERIFYHOST, 2)
        setopt(easy, CURLOPT_FOLLOWLOCATION, 0)
        setopt(easy, CURLOPT_TIMEOUT_MS, Int(max(request.timeout, 1)))
        setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(max(request.connectTimeout, 1)))
        setopt(easy, CURLOPT_USERAGENT, Self.userAgent)
        if let caFile = request.caFile { setopt(easy, CURLOPT_CAINFO, caFile) }
        _ = pa_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = pa_easy_setopt_write(easy, CURLOPT_WRITEFUNCTION, curlBodyCallback)
        _ = pa_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, me)
        _ = pa_easy_setopt_write(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        _ = pa_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, me)

        let sendsBody = !request.body.isEmpty || request.method == "POST" || request.method == "PUT"
            || request.method == "PATCH"
        switch request.method {
        case "GET" where !sendsBody:
            setopt(easy, CURLOPT_HTTPGET, 1)
        case "HEAD" where !sendsBody:
            setopt(easy, CURLOPT_NOBODY, 1)
        default:
            if sendsBody {
                // Size first: COPYPOSTFIELDS then copies exactly that many bytes, NULs included.
                _ = pa_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
                _ = request.body.withUnsafeBytes { buffer in
                    pa_easy_setopt_ptr(easy, CURLOPT_COPYPOSTFIELDS, buffer.baseAddress ?? UnsafeRawPointer(me))
                }
            }
            if request.method != "POST" { setopt(easy, CURLOPT_CUSTOMREQUEST, request.method) }
        }
        try setHeaders(request.headers, sendsBody: sendsBody)
    }

    private func setHeaders(_ headers: [(name: String, value: String)], sendsBody: Bool) throws(HTTPError) {
        var lines: [String] = []
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte),
                  !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw .invalid("invalid request header", redactedURL: redactedURL)
            }
            // "Name:" would tell libcurl to drop the header; "Name;" sends it empty.
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if sendsBody {
            // No `Expect: 100-continue` round trip, and no made-up form content type.
            lines.append("Expect:")
            if !headers.contains(where: { $0.name.lowercased() == "content-type" }) { lines.append("Content-Type:") }
        }
        for line in lines {
            guard let list = curl_slist_append(headerList, line) else {
                throw HTTPError(kind: .other, url: redactedURL, reason: "out of memory for request headers")
            }
            headerList = list
        }
        if let headerList { _ = pa_easy_setopt_ptr(easy, CURLOPT_HTTPHEADER, headerList) }
    }

    /// RFC 9110 `tchar`: what a method or header name may contain.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// `CURLOPT_WRITEFUNCTION`: `user` is the unretained `CurlTransfer`, alive while its handle is
/// in the multi handle.
private func curlBodyCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                              _ user: UnsafeMutableRawPointer?) -> Int {
    hand(data, size * count, to: user) { $0.received(body: $1) }
}

/// `CURLOPT_HEADERFUNCTION`: one header line per call.
private func curlHeaderCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                                _ user: UnsafeMutableRawPointer?) -> Int {
    hand(data, size * count, to: user) { $0.received(headerLine: $1) }
}

/// Passes libcurl's bytes to the transfer; returns how many were taken (fewer aborts the transfer).
@inline(__always)
private func hand(_ data: UnsafeMutablePointer<CChar>?, _ length: Int, to user: UnsafeMutableRawPointer?,
                  _ take: (CurlTransfer, UnsafeRawBufferPointer) -> Void) -> Int {
    guard let user else { return 0 }
    take(Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue(), UnsafeRawBufferPointer(start: data, count: length))
    return length
}
