/// The priority stage (Docs/sinks.md#priority): a `"priority": "high"` event skips quiet hours
/// and groups and is delivered alone, at once; rate limits and retries still apply.
public enum Priority {
    /// True when `event` goes past quiet hours and groups.
    public static func bypassesHoldAndGroups(_ event: PolicyEvent) -> Bool {
        event.highPriority
    }
}
