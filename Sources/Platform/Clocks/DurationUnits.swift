extension Duration {
    /// Whole milliseconds, as the clocks, deadlines and settings of pricealert count time.
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// Whole nanoseconds, for SwiftNIO's `TimeAmount`; `Int64.max` for a duration too long to
    /// count in them (about 292 years).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole + attoseconds / 1_000_000_000
    }
}
