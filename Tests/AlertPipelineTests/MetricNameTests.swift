import AlertSinks
import Operations
import Testing

/// Operations knows no sink: its catalog names the delivery counter that AlertSinks counts by
/// name. The two must stay the same, or `/metrics` serves the counter without its HELP line.
@Suite struct MetricNameTests {
    @Test func theCatalogNamesTheCounterTheSinksCount() {
        #expect(MetricsCatalog.deliveries == DeliveryMetric.name)
    }
}
