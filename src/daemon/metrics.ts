import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ClientEvents } from '../api/client.ts';
import type { MetricUpdates, OrgCounters } from './daemon-memory.ts';

/** The daemon's Prometheus metrics, on a registry of its own. */
export class DaemonMetrics {
  readonly registry = new Registry();
  readonly passes = new Counter({
    name: 'envsync_passes_total',
    help: 'Reconcile passes by result (success: every org ok; partial: some org failed or invalid; error: the pass itself failed).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly passDuration = new Histogram({
    name: 'envsync_pass_duration_seconds',
    help: 'Duration of reconcile passes.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly pending = new Gauge({
    name: 'envsync_org_pending_changes',
    help: 'Changes pending per org after the last pass (create, update, unverified not applied).',
    labelNames: ['org'] as const,
    registers: [this.registry],
  });
  readonly suspended = new Gauge({
    name: 'envsync_org_suspended',
    help: 'Whether the org is suspended (its manifests say suspend: true): read and planned, nothing sent.',
    labelNames: ['org'] as const,
    registers: [this.registry],
  });
  readonly driftPending = new Gauge({
    name: 'envsync_org_drift_pending',
    help: 'Changes that would set back drift, planned and not sent (observe mode, outside a sync window, or a suspended org).',
    labelNames: ['org'] as const,
    registers: [this.registry],
  });
  readonly lastSuccess = new Gauge({
    name: 'envsync_org_last_success_timestamp_seconds',
    help: 'When each org last finished a pass without error (Unix seconds).',
    labelNames: ['org'] as const,
    registers: [this.registry],
  });
  readonly manifestErrors = new Gauge({
    name: 'envsync_org_manifest_errors',
    help: 'Manifest problems per org in the last pass (an org with any is left alone).',
    labelNames: ['org'] as const,
    registers: [this.registry],
  });
  readonly unmanaged = new Gauge({
    name: 'envsync_org_unmanaged_environments',
    help: 'Environments in the service but not in the manifests, per org.',
    labelNames: ['org'] as const,
    registers: [this.registry],
  });
  readonly changes = new Counter({
    name: 'envsync_changes_total',
    help: 'Changes sent to the API by action and result (applied, failed, not-converged).',
    labelNames: ['action', 'result'] as const,
    registers: [this.registry],
  });
  readonly driftHealed = new Counter({
    name: 'envsync_drift_healed_total',
    help: 'Drift set back per org: changes applied where the service had changed while the manifests stayed as last applied.',
    labelNames: ['org'] as const,
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: 'envsync_http_requests_total',
    help: 'Requests to the Environments API by method and status ("error" for no answer).',
    labelNames: ['method', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'envsync_http_request_duration_seconds',
    help: 'Duration of requests to the Environments API.',
    labelNames: ['method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'envsync_http_retries_total',
    help: 'Retried requests by method and reason (status or error kind).',
    labelNames: ['method', 'reason'] as const,
    registers: [this.registry],
  });
  readonly throttled = new Counter({
    name: 'envsync_http_throttled_total',
    help: 'Throttled (429) answers from the API.',
    registers: [this.registry],
  });
  readonly throttledSeconds = new Counter({
    name: 'envsync_throttled_seconds_total',
    help: 'Time requests to the API waited because it throttled them (Retry-After), wall clock.',
    registers: [this.registry],
  });
  readonly revision = new Gauge({
    name: 'envsync_revision_info',
    help: 'The manifests revision of the last pass (git-sync worktree name), as a label.',
    labelNames: ['revision'] as const,
    registers: [this.registry],
  });
  readonly notifications = new Counter({
    name: 'envsync_notifications_total',
    help: 'Notifications per receiver by how they ended (delivered; failed: refused or out of attempts; dropped: the queue was full; abandoned: at shutdown).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly notificationsQueued = new Gauge({
    name: 'envsync_notifications_queued',
    help: 'Notifications waiting to be delivered, over every receiver.',
    registers: [this.registry],
  });
  readonly ready = new Gauge({
    name: 'envsync_ready',
    help: '1 when /readyz answers 200.',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 1000 });
    for (const result of ['delivered', 'failed', 'dropped', 'abandoned'])
      this.notifications.inc({ result }, 0);
  }

  /** Hooks for the API client. */
  clientEvents(): ClientEvents {
    return {
      request: (method, status, durationMs) => {
        this.requests.inc({ method, status: String(status) });
        this.requestDuration.observe({ method }, durationMs / 1000);
      },
      retry: (method, reason) => this.retries.inc({ method, reason }),
      throttled: () => this.throttled.inc(),
      throttledFor: (ms) => this.throttledSeconds.inc(ms / 1000),
    };
  }

  /** Carries out what daemon/daemon-memory.ts decided the metrics learn. */
  apply(update: MetricUpdates): void {
    for (const org of update.forget ?? []) {
      for (const gauge of [
        this.pending,
        this.lastSuccess,
        this.manifestErrors,
        this.unmanaged,
        this.suspended,
        this.driftPending,
      ])
        gauge.remove({ org });
      this.driftHealed.remove({ org });
    }
    if (update.revision !== undefined) {
      this.revision.reset();
      this.revision.set({ revision: update.revision.value ?? '' }, 1);
    }
    if (update.org !== undefined) this.#applyOrg(update.org);
    if (update.pass !== undefined) {
      this.passes.inc({ result: update.pass.result });
      this.passDuration.observe(update.pass.durationSeconds);
    }
    this.ready.set(update.ready ? 1 : 0);
  }

  #applyOrg(counters: OrgCounters): void {
    const { org } = counters;
    this.manifestErrors.set({ org }, counters.manifestErrors);
    for (const { action, result } of counters.changes) this.changes.inc({ action, result });
    // By 0 too: the org's series exists from its first pass, so a rate over it starts at 0.
    this.driftHealed.inc({ org }, counters.driftHealed);
    if (counters.unmanaged !== undefined) this.unmanaged.set({ org }, counters.unmanaged);
    if (counters.pending !== undefined) this.pending.set({ org }, counters.pending);
    if (counters.suspended !== undefined) this.suspended.set({ org }, counters.suspended ? 1 : 0);
    if (counters.driftPending !== undefined) this.driftPending.set({ org }, counters.driftPending);
    if (counters.lastSuccessSeconds !== undefined)
      this.lastSuccess.set({ org }, counters.lastSuccessSeconds);
  }
}
