import CCurl

/// How a request becomes libcurl options: the fixed policy (TLS verified, no redirects, no
/// `Expect`) and the per-request method, headers and body.
extension CurlTransfer {
    /// Sets every option for `request`; throws for a method or header that cannot be sent.
    func configure(_ request: HTTPRequest) throws(HTTPError) {
        try request.checkMethodAndHeaders(redactedURL: redactedURL)
        let me = Unmanaged.passUnretained(self).toOpaque()
        setopt(easy, CURLOPT_URL, request.url)
        setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        setopt(easy, CURLOPT_NOSIGNAL, 1)
        setopt(easy, CURLOPT_SSL_VERIFYPEER, 1)
        setopt(easy, CURLOPT_SSL_VERIFYHOST, 2)
        setopt(easy, CURLOPT_FOLLOWLOCATION, 0)
        setopt(easy, CURLOPT_TIMEOUT_MS, Int(max(request.timeout, 1)))
        setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(max(request.connectTimeout, 1)))
        setopt(easy, CURLOPT_USERAGENT, HTTPRequest.userAgent)
        // The same trust as the feeds' (`ClientTLS`): the sink's CA file, else SSL_CERT_FILE,
        // else SSL_CERT_DIR (libcurl itself reads neither variable).
        if let caFile = request.caFile ?? ClientTLS.certFile {
            setopt(easy, CURLOPT_CAINFO, caFile)
        } else if let directory = ClientTLS.certDirectory {
            setopt(easy, CURLOPT_CAPATH, directory)
        }
        _ = pa_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = pa_easy_setopt_write(easy, CURLOPT_WRITEFUNCTION, curlBodyCallback)
        _ = pa_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, me)
        _ = pa_easy_setopt_write(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        _ = pa_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, me)

        let sendsBody = request.sendsBody
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
            // "Name:" would tell libcurl to drop the header; "Name;" sends it empty.
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if sendsBody {
            // No `Expect: 100-continue` round trip, and no made-up form content type.
            lines.append("Expect:")
            if !headers.contains(where: { $0.name.lowercased() == "content-type" }) { lines.append("Content-Type:") }
        }
        for line in lines {
            guard let list = pa_curl_slist_append(headerList, line) else {
                throw HTTPError(kind: .other, url: redactedURL, reason: "out of memory for request headers")
            }
            headerList = list
        }
        if let headerList { _ = pa_easy_setopt_ptr(easy, CURLOPT_HTTPHEADER, headerList) }
    }
}
