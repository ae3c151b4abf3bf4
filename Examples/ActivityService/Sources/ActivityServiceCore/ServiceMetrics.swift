import Foundation
import Metrics
import Prometheus

/// The process's metrics, in Prometheus's text format at `/metrics`: the
/// store's (`eventlog_*`, `activity_*`: `Docs/Services.md`, "Metrics") and
/// Hummingbird's (`hb_*`). swift-metrics has one backend a process, so it
/// is bootstrapped once, before the store opens (its metrics are made then).
public enum ServiceMetrics {
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Writes that share a commit: 1 to 64 (the group commit's limit).
        factory.valueHistogramBuckets["eventlog_commit_writes"] = [1, 2, 4, 8, 16, 24, 32, 48, 64]
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// Bootstraps the metrics system, once.
    public static func bootstrap() { _ = registry }
}
