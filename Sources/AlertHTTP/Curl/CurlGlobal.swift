import CCurl

/// libcurl is loaded (and `curl_global_init` run) by the first `CurlHTTPClient`, not at start-up
/// (see `ccurl.h`): nil once it is ready, else why it cannot be used, which every request then
/// fails with. A global `let` is initialised exactly once, lazily and thread-safely.
let curlUnavailable: String? = {
    var reason = [CChar](repeating: 0, count: 512)
    guard pa_curl_load(&reason, reason.count) != 0 else { return nil }
    return String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}()

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
