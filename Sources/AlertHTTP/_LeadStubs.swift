// TEMPORARY: stand-ins until the http branch lands; deleted at merge.
public enum RedactedURL {
    public static func redact(_ url: String) -> String { url }
}

public enum RetryAfter {
    public static func delay(from header: String?, now: Int64) -> Int64? {
        header.flatMap { Int64($0) }.map { $0 * 1000 }
    }
}
