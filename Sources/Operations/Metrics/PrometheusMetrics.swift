import CoreMetrics
import Prometheus

/// The process's metrics backend: a Prometheus registry behind swift-metrics, so the delivery
/// code (AlertSinks, AlertOutbox) counts through swift-metrics without knowing the server exists.
public enum PrometheusMetrics {
    /// Bootstraps swift-metrics with a Prometheus registry and returns it. Once per process.
    public static func bootstrap() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(CatalogMetricsFactory(registry: registry))
        return registry
    }

    /// A registry and factory of their own, for tests (swift-metrics' bootstrap is once per process).
    public static func isolated() -> (registry: PrometheusCollectorRegistry, factory: any MetricsFactory) {
        let registry = PrometheusCollectorRegistry()
        return (registry, CatalogMetricsFactory(registry: registry))
    }
}
