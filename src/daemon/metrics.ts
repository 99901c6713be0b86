import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ClientEvents } from '../api/client.ts';
import { NOTIFY_RESULTS } from '../notify/delivery.ts';
import type { MetricUpdates, OrgCounters } from './pass.ts';
import { type DaemonStatus, HEALTH_LEVELS, type Standing, SYNC_STATES } from './status.ts';

/** Per org, read from /status when scraped: 1 for its current health or sync, 0 for the others. */
const ORG_WORDS = {
  health: ['Can envsync read, plan and send', HEALTH_LEVELS],
  sync: ['Does the service hold what the manifests declare', SYNC_STATES],
} as const;

/** The gauges per org, by the field of OrgCounters that sets them (unset: the last value stays). */
const ORG_GAUGES: Partial<Record<keyof OrgCounters, readonly [string, string]>> = {
  pending: [
    'envsync_org_pending_changes',
    'Changes pending per org after the last pass (create, update, unverified not applied).',
  ],
  suspended: [
    'envsync_org_suspended',
    'Whether the org is suspended (its manifests say suspend: true): read and planned, nothing sent.',
  ],
  driftPending: [
    'envsync_org_drift_pending',
    'Changes that would set back drift, planned and not sent (observe mode, outside a sync window, or a suspended org).',
  ],
  lastSuccessSeconds: [
    'envsync_org_last_success_timestamp_seconds',
    'When each org last finished a pass without error (Unix seconds).',
  ],
  manifestErrors: [
    'envsync_org_manifest_errors',
    'Manifest problems per org in the last pass (an org with any is left alone).',
  ],
  unmanaged: [
    'envsync_org_unmanaged_environments',
    'Environments in the service but not in the manifests, per org.',
  ],
};

/** The daemon's Prometheus metrics, on a registry of its own (docs/daemon.md lists them). */
export class DaemonMetrics {
  readonly registry = new Registry();
  readonly #counter = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
  ) => new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  readonly #gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers: [this.registry] });
  readonly #histogram = <L extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[] = [],
  ) => new Histogram<L>({ name, help, buckets, labelNames, registers: [this.registry] });

  readonly passes = this.#counter(
    'envsync_passes_total',
    'Reconcile passes by result (success: every org ok; partial: some org failed or invalid; failed: every org; error: the pass itself failed).',
    ['result'],
  );
  readonly passDuration = this.#histogram(
    'envsync_pass_duration_seconds',
    'Duration of reconcile passes.',
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  );
  /** The gauges per org, by the field of OrgCounters that sets them. */
  readonly #orgGauges = Object.entries(ORG_GAUGES).map(
    ([field, [name, help]]) =>
      [field as keyof OrgCounters, this.#gauge(name, help, ['org'])] as const,
  );
  readonly changes = this.#counter(
    'envsync_changes_total',
    'Changes sent to the API by action and result (applied, failed, not-converged).',
    ['action', 'result'],
  );
  readonly driftHealed = this.#counter(
    'envsync_drift_healed_total',
    'Drift set back per org: changes applied where the service had changed while the manifests stayed as last applied.',
    ['org'],
  );
  readonly requests = this.#counter(
    'envsync_http_requests_total',
    'Requests to the Environments API by method and status ("error" for no answer).',
    ['method', 'status'],
  );
  readonly requestDuration = this.#histogram(
    'envsync_http_request_duration_seconds',
    'Duration of requests to the Environments API.',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ['method'],
  );
  readonly retries = this.#counter(
    'envsync_http_retries_total',
    'Retried requests by method and reason (status or error kind).',
    ['method', 'reason'],
  );
  readonly throttled = this.#counter(
    'envsync_http_throttled_total',
    'Throttled (429) answers from the API.',
  );
  readonly throttledSeconds = this.#counter(
    'envsync_throttled_seconds_total',
    'Time requests to the API waited because it throttled them (Retry-After), wall clock.',
  );
  readonly revision = this.#gauge(
    'envsync_revision_info',
    'The manifests revision of the last pass (git-sync worktree name), as a label.',
    ['revision'],
  );
  readonly notifications = this.#counter(
    'envsync_notifications_total',
    'Notifications per receiver by how they ended (delivered; failed: refused or out of attempts; dropped: the queue was full; abandoned: at shutdown).',
    ['result'],
  );
  readonly notificationsQueued = this.#gauge(
    'envsync_notifications_queued',
    'Notifications waiting to be delivered, over every receiver.',
  );
  readonly ready = this.#gauge('envsync_ready', '1 when /readyz answers 200.');

  constructor(status?: () => DaemonStatus) {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 1000 });
    for (const result of NOTIFY_RESULTS) this.notifications.inc({ result }, 0);
    for (const [key, [what, words]] of Object.entries(ORG_WORDS)) {
      const gauge: Gauge = new Gauge({
        name: `envsync_org_${key}`,
        help: `${what}: ${words.join(', ')} (1 for the org's current one).`,
        labelNames: ['org', 'status'],
        registers: [],
        collect: () => {
          gauge.reset();
          for (const [org, shown] of Object.entries(status?.().orgs ?? {})) {
            for (const word of words)
              gauge.set({ org, status: word }, Number(word === shown[key as keyof Standing]));
          }
        },
      });
      this.registry.registerMetric(gauge);
    }
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

  /** Carries out what a step of daemon/pass.ts decided the metrics learn. */
  apply(update: MetricUpdates): void {
    for (const org of update.forget ?? []) {
      for (const [, gauge] of this.#orgGauges) gauge.remove({ org });
      this.driftHealed.remove({ org });
    }
    if (update.revision !== undefined) {
      this.revision.reset();
      this.revision.set({ revision: update.revision.value ?? '' }, 1);
    }
    const counters = update.org;
    if (counters !== undefined) {
      const { org } = counters;
      for (const [field, gauge] of this.#orgGauges) {
        const value = counters[field];
        if (typeof value === 'number' || typeof value === 'boolean')
          gauge.set({ org }, Number(value));
      }
      for (const { action, result } of counters.changes) this.changes.inc({ action, result });
      // By 0 too: the org's series exists from its first pass, so a rate over it starts at 0.
      this.driftHealed.inc({ org }, counters.driftHealed);
    }
    if (update.pass !== undefined) {
      this.passes.inc({ result: update.pass.result });
      this.passDuration.observe(update.pass.durationSeconds);
    }
  }
}
