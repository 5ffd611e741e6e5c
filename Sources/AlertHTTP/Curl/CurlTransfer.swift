import CCurl
import Synchronization

/// One request: its configured easy handle, the buffers libcurl writes into, and the task
/// waiting for it.
///
/// `@unchecked Sendable` because ownership passes hands exactly once: the sending task creates
/// and configures it and sets `continuation`, then hands it to the loop thread through
/// `CurlMultiLoop`'s mutex-protected queue (the mutex orders those writes before the loop's
/// reads). From then on only the loop thread touches the mutable fields, and what it gives back
/// through the continuation is a value; `deinit` may run on the sender's thread, but only after
/// the continuation was resumed, which orders the loop's writes before it. The one field another
/// thread may touch meanwhile is `cancelRequested`, an atomic.
final class CurlTransfer: @unchecked Sendable {
    let id: UInt64
    let easy: UnsafeMutableRawPointer
    let redactedURL: String
    /// Set by the task's cancellation handler; read by the loop when it takes the transfer.
    let cancelRequested = Atomic<Bool>(false)
    var continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>?

    private let rawURL: String
    /// Freed with the transfer: libcurl reads it until the transfer ends.
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var responseHeaders: [(name: String, value: String)] = []
    private var body: [UInt8] = []
    private let limit: ResponseLimit
    private var headerBytes = 0
    /// What made a callback refuse bytes, which aborts the transfer with `CURLE_WRITE_ERROR`.
    private var overflow: Overflow?

    private enum Overflow {
        case body, headers
    }

    init(id: UInt64, request: HTTPRequest) throws(HTTPError) {
        self.id = id
        self.rawURL = request.url
        self.redactedURL = RedactedURL.redact(request.url)
        self.limit = request.responseLimit
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        guard let easy = pa_curl_easy_init() else {
            errorBuffer.deallocate()
            throw HTTPError(kind: .other, url: redactedURL, reason: "curl_easy_init failed")
        }
        self.easy = easy
        try configure(request)
    }

    deinit {
        pa_curl_easy_cleanup(easy)
        pa_curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Builds the result from libcurl's `code` and resumes the waiting task. Loop thread only,
    /// after the handle left the multi handle (or never entered it).
    func complete(_ code: CURLcode) {
        if code == CURLE_OK || (overflow == .body && limit.truncates) {
            var status = 0
            var seconds = 0.0
            _ = pa_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            _ = pa_easy_getinfo_double(easy, CURLINFO_TOTAL_TIME, &seconds)
            finish(.success(HTTPResponse(status: status, headers: responseHeaders, body: body, duration: seconds)))
        } else if let overflow {
            let reason =
                switch overflow {
                case .body: "response body larger than \(sizeText(limit.bytes)), the limit for this request"
                case .headers: "response headers larger than \(sizeText(ResponseLimit.maxHeaderBytes))"
                }
            finish(.failure(HTTPError(kind: .other, url: redactedURL, reason: reason)))
        } else {
            var osError = 0
            _ = pa_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osError)
            finish(
                .failure(
                    HTTPError(
                        curlCode: code, osError: osError, detail: String(cString: errorBuffer),
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

    /// Keeps `data` while the body stays within the limit; false (abort) once it would not.
    fileprivate func received(body data: UnsafeRawBufferPointer) -> Bool {
        let room = limit.bytes - body.count
        guard data.count <= room else {
            body.append(contentsOf: data.prefix(room))
            overflow = .body
            return false
        }
        body.append(contentsOf: data)
        return true
    }

    /// One header line as libcurl hands it over, CRLF included. A status line starts a new
    /// response (after `100 Continue` or any other interim one), so the headers start over.
    fileprivate func received(headerLine line: UnsafeRawBufferPointer) -> Bool {
        headerBytes += line.count
        guard headerBytes <= ResponseLimit.maxHeaderBytes else {
            overflow = .headers
            return false
        }
        var bytes = line[...]
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes = bytes.dropLast() }
        if bytes.starts(with: "HTTP/".utf8) {
            responseHeaders.removeAll(keepingCapacity: true)
            return true
        }
        guard let colon = bytes.firstIndex(of: 0x3A) else { return true }
        let name = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        let value = bytes[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
        responseHeaders.append((name: name, value: String(decoding: value, as: UTF8.self)))
        return true
    }
}

/// `CURLOPT_WRITEFUNCTION`: `user` is the unretained `CurlTransfer`, alive while its handle is
/// in the multi handle.
func curlBodyCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ user: UnsafeMutableRawPointer?
) -> Int {
    hand(data, size * count, to: user) { $0.received(body: $1) }
}

/// `CURLOPT_HEADERFUNCTION`: one header line per call.
func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ user: UnsafeMutableRawPointer?
) -> Int {
    hand(data, size * count, to: user) { $0.received(headerLine: $1) }
}

/// Passes libcurl's bytes to the transfer; returns how many were taken (0, when `take` refuses
/// them, aborts the transfer).
@inline(__always)
private func hand(
    _ data: UnsafeMutablePointer<CChar>?, _ length: Int, to user: UnsafeMutableRawPointer?,
    _ take: (CurlTransfer, UnsafeRawBufferPointer) -> Bool
) -> Int {
    guard let user else { return 0 }
    let taken = take(
        Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue(),
        UnsafeRawBufferPointer(start: data, count: length))
    return taken ? length : 0
}
