/**
 * `entity-registry/telemetry`: what operators read. Metrics (prom-client), logs (pino), readiness, and
 * the admin handler that serves `/live`, `/ready` and `/metrics`; `createTelemetry` is the core's
 * `Telemetry` port over them.
 */
export { createMetrics, type Metrics, type MetricsOptions, type MetricSources } from './metrics.js'
export { createLogger, type Logger, type LoggerOptions, type LogLevel, type LogFormat } from './logger.js'
export { createTelemetry, type TelemetryOptions } from './telemetry.js'
export { timedStore } from './timed-store.js'
export { createReadiness, storeCheck, blobsCheck, searchCheck, type Readiness, type ReadinessCheck, type ReadinessOptions, type ReadinessReport, type SearchIndexLag } from './readiness.js'
export { createAdminHandler, type AdminHandler, type AdminHandlerOptions } from './admin-handler.js'
