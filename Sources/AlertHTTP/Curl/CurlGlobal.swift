import CCurl

/// `curl_global_init` must run once before any other libcurl call. A global `let` is initialised
/// exactly once, lazily and thread-safely, by the first `CurlHTTPClient`.
let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

/// The `Int`-sized `long` arguments `pa_easy_setopt_long` takes.
@inline(__always)
func setopt(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: Int) {
    _ = pa_easy_setopt_long(easy, option, value)
}

/// String options: libcurl copies them (all but `CURLOPT_POSTFIELDS`, which is not used).
@inline(__always)
func setopt(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: String) {
    _ = value.withCString { pa_easy_setopt_ptr(easy, option, $0) }
}
