import AlertModel

/// How the outbox delivers to a webhook or exec sink: `concurrency` and `retry` (`backoff`,
/// `maxBackoff`, `maxAge`), each optional.
extension FileChecker {
    static let deliveryKeys = ["concurrency", "retry"]
    static let retryKeys = ["backoff", "maxBackoff", "maxAge"]
    /// More attempts in flight than this only opens connections the receiver has to refuse.
    static let maxConcurrency = 64

    mutating func delivery(_ members: [JSONMember]) -> DeliverySettings {
        var settings = DeliverySettings()
        if let member = members["concurrency"] {
            settings.concurrency = wholeNumber(member.value, "'concurrency'", in: 1...Self.maxConcurrency)
        }
        guard let retry = members["retry"], let keys = object(retry.value, "'retry'") else { return settings }
        checkKeys(keys, allowed: Self.retryKeys)
        settings.backoff = keys["backoff"].flatMap { positiveDuration($0.value, "'backoff'", limit: Limits.backoff) }
        settings.maxBackoff = keys["maxBackoff"].flatMap {
            positiveDuration($0.value, "'maxBackoff'", limit: Limits.maxBackoff)
        }
        settings.maxAge = keys["maxAge"].flatMap { positiveDuration($0.value, "'maxAge'", limit: Limits.maxAge) }
        if let backoff = settings.backoff, let maxBackoff = settings.maxBackoff, maxBackoff < backoff,
            let node = keys["maxBackoff"]?.value
        {
            error("'maxBackoff' must not be shorter than 'backoff'", at: node.position)
        }
        return settings
    }

    /// A duration longer than zero and at most `limit` (sink timeouts, retry settings, `for`, `every`).
    mutating func positiveDuration(_ node: JSONNode, _ name: String, limit: Limits.DurationLimit) -> Int64? {
        guard let millis = duration(node, name, limit: limit) else { return nil }
        guard millis > 0 else {
            error("\(name) must be longer than 0s", at: node.position)
            return nil
        }
        return millis
    }
}
