import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { clientFromSettings, connectionPool, type Transport } from '../api/client.ts';
import { RequestGate } from '../api/gate.ts';
import { shownApiUrl } from '../config/api-url.ts';
import type { DaemonSettings } from '../config/daemon-settings.ts';
import * as tokens from '../config/tokens.ts';
import { SETTINGS, type Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import type { Masker } from '../core/mask.ts';
import { waitingWords, windowReport, windowState } from '../core/windows.ts';
import { reconcile } from '../engine/reconcile.ts';
import type { OrgManifest } from '../manifests/load.ts';
import { Notifier, type NotifierOptions } from '../notify/delivery.ts';
import { commitStatus } from '../notify/events.ts';
import { errorMessage } from '../runtime/errors.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { StateStore } from '../state/store.ts';
import { DaemonMetrics } from './metrics.ts';
import * as steps from './pass.ts';
import { PassScheduler } from './scheduler.ts';
import { Shutdown, stopBudget } from './shutdown.ts';
import { MAX_ENVIRONMENT_ROWS, type DaemonStatus } from './status.ts';
import { ManifestWatcher } from './watcher.ts';

/** What tests may replace in the notifier: the delivery's limits. */
export type NotifyDeps = Pick<NotifierOptions, 'policy'>;

/** What a daemon is made of: its settings, and the outside world, passed in. */
export interface DaemonOptions {
  readonly settings: Settings;
  readonly daemon: DaemonSettings;
  readonly apiUrl: URL;
  /** Read before each pass: a rotated token file is used without a restart. */
  readonly readTokens: () => Promise<tokens.TokenSet>;
  readonly ca?: string | undefined;
  readonly cwd: string;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** What every sink of the daemon masks; the daemon adds each token it reads. */
  readonly secrets: Masker;
  readonly notify?: NotifyDeps;
}

const WEBHOOK = 'webhook';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** An org's manifests as the pass's decisions see them: its files, and its content as text. */
function passOrg(org: OrgManifest): steps.PassOrg {
  const environments = org.environments.map(({ source: _source, ...env }) => env);
  // An edit of a policy document is a change of the manifests too.
  const documents = (org.policies ?? []).map((doc) => [
    doc.name,
    doc.description ?? null,
    sha256(doc.content),
  ]);
  return {
    org: org.org,
    files: org.files,
    manifestsKey: JSON.stringify(documents.length > 0 ? { environments, documents } : environments),
    types: org.environments.slice(0, MAX_ENVIRONMENT_ROWS).map((e) => [e.name, e.type] as const),
  };
}

/**
 * The long-running reconciler (docs/daemon.md): each pass reads a settled snapshot and runs the
 * engine of `envsync sync`; the pure steps of pass.ts decide what it means, this class carries it out.
 */
export class Daemon {
  readonly metrics = new DaemonMetrics();
  readonly apiAddress: string;
  readonly secrets: Masker;
  readonly #options: DaemonOptions;
  readonly #clock: Clock;
  readonly #scheduler: PassScheduler;
  readonly #shutdown: Shutdown;
  readonly #watcher: ManifestWatcher;
  #memory: steps.DaemonMemory = steps.EMPTY_DAEMON_MEMORY;
  /** What it holds for its life; one pool and gate for every pass, so the pace learned carries. */
  #open: { notifier: Notifier | undefined; state: StateStore; transport: Transport } | undefined;
  /** The last pass's tokens: where each org's came from, for `/status`. */
  #tokens: tokens.TokenSet | undefined;
  /** When the last webhook pass started, and when the next one is due while one is asked for. */
  #lastWebhookPass = -Infinity;
  #webhookDue: number | undefined;

  constructor(options: DaemonOptions) {
    const { settings, daemon, logger, cwd } = options;
    this.#options = options;
    this.apiAddress = shownApiUrl(options.apiUrl);
    this.secrets = options.secrets;
    const clock = (this.#clock = options.clock ?? systemClock);
    this.#shutdown = new Shutdown(clock);
    this.#scheduler = new PassScheduler((r) => this.#pass(r), daemon.debounceMs, clock);
    this.#watcher = new ManifestWatcher({
      settings,
      cwd,
      settleMs: daemon.settleMs,
      clock,
      logger,
      stop: this.#shutdown.stopping,
      onFileEvent: (reason) => this.#scheduler.debounced(reason),
      onRetarget: ({ revision, realRoot }) =>
        this.#scheduler.now(`revision ${revision ?? realRoot}`),
    });
  }

  /** Opens the notifier, then the state (an unreadable notify secret stops before its lock). */
  async start(): Promise<void> {
    const { settings, daemon, cwd, logger, apiUrl, secrets } = this.#options;
    const { targets, secretFile, githubTokenFile, githubToken } = daemon.notify;
    const read = (flag: string, file: string | undefined, what: string) =>
      file === undefined
        ? undefined
        : tokens.readSecretFile(flag, path.resolve(cwd, file), what, settings.deadlineMs);
    const secret = await read('--notify-secret-file', secretFile, 'signing secret');
    const notifier =
      targets.length === 0
        ? undefined
        : new Notifier({
            targets,
            secret,
            githubToken:
              (await read('--github-token-file', githubTokenFile, 'GitHub token')) ?? githubToken,
            source: daemon.publicUrl ?? `urn:envsync:${hostname()}`,
            link: daemon.publicUrl === undefined ? undefined : `${daemon.publicUrl}/`,
            clock: this.#clock,
            logger,
            secrets,
            ...this.#options.notify,
            count: (result) => this.metrics.notifications.inc({ result }),
            queued: (count) => this.metrics.notificationsQueued.set(count),
          });
    const state = await StateStore.load(path.resolve(cwd, settings.state), logger, apiUrl.href, {
      secrets,
      lockTimeoutMs: settings.stateLockTimeoutMs,
      // The default path in the working directory: say once that it was made there.
      announceCreation: settings.state === SETTINGS.state.default,
      readTimeoutMs: settings.deadlineMs,
    });
    const { concurrency, timeoutMs } = settings;
    const transport = {
      pool: connectionPool(apiUrl.origin, { concurrency, timeoutMs, ca: this.#options.ca }),
      gate: new RequestGate(concurrency, this.#clock),
    };
    this.#open = { notifier, state, transport };
    await this.#watcher.start();
    this.#scheduler.now('start');
  }

  /** Starts a pass now (SIGHUP). */
  trigger(reason: string): void {
    this.#scheduler.now(reason);
  }

  /** Starts a pass, or joins the next one while one started within `--webhook-min-interval`. */
  webhook(): { runAt: number; joined: boolean } {
    const now = this.#clock.now();
    if (this.#webhookDue !== undefined)
      return { runAt: Math.max(now, this.#webhookDue), joined: true };
    const at = Math.max(now, this.#lastWebhookPass + this.#options.daemon.webhookMinIntervalMs);
    this.#webhookDue = at;
    if (at <= now) this.#scheduler.now(WEBHOOK);
    else this.#scheduler.at(WEBHOOK, at - now, WEBHOOK);
    return { runAt: at, joined: false };
  }

  /** `/readyz`: ready once the first pass ended, while passes end and an org is reconciled. */
  get ready(): { ready: boolean; reason?: string } {
    return steps.readiness(this.#memory, this.#around());
  }

  /** `/healthz`: not live when a pass has been running for far too long (a wedged loop). */
  get liveness(): { live: boolean; reason?: string } {
    const { intervalMs } = this.#options.daemon;
    return steps.liveness(this.#scheduler.passStartedAt, intervalMs, this.#clock.now());
  }

  /** `/status` and the status page's model. */
  status(): DaemonStatus {
    const { state, notifier } = this.#open ?? {};
    const { settings, daemon } = this.#options;
    const memory = this.#memory;
    const windows = settings.syncWindows ?? [];
    const window =
      windows.length === 0 ? null : windowReport(windowState(windows, this.#clock.now()));
    const around = { observe: daemon.observe, windowOpen: window?.open ?? true };
    const set = this.#tokens;
    const tokenSource = (org: string) => (set ? tokens.tokenSourceOf(set, org) : null);
    const { health, orgs } = steps.orgsStatus(memory, around, tokenSource);
    return {
      revision: memory.revision ?? null,
      manifests: settings.manifests,
      ready: this.ready.ready,
      passes: memory.passes,
      lastPass: memory.lastPass,
      passRunning: this.#scheduler.running,
      shard: daemon.shard ?? null,
      errors: [...memory.unattributed],
      stateFile: { path: state?.file ?? null, writeError: state?.writeError ?? null },
      dialect: memory.dialect ?? null,
      mode: daemon.observe ? 'observe' : 'normal',
      window,
      health,
      orgs,
      ...(notifier === undefined ? {} : { notifications: notifier.status() }),
    };
  }

  /** Resolves when no pass runs or is pending (for tests). */
  idle(): Promise<void> {
    return this.#scheduler.idle();
  }

  /** A graceful stop within `--shutdown-timeout` (shutdown.ts), then the state and notifications. */
  async stop(): Promise<void> {
    if (this.#shutdown.stopping.aborted) return;
    const { passMs } = stopBudget(this.#options.daemon.shutdownTimeoutMs);
    const stopped = this.#shutdown.stop(this.#scheduler.stop(), passMs, this.#options.logger);
    await this.#watcher.close();
    await stopped;
    await this.#open?.state.save();
    await this.#open?.notifier?.close();
    await this.#open?.transport.pool.close();
  }

  async #pass(reasons: readonly string[]): Promise<void> {
    const startedAt = this.#clock.now();
    if (reasons.includes(WEBHOOK)) {
      this.#lastWebhookPass = startedAt;
      this.#webhookDue = undefined;
    }
    const { settings, daemon, logger } = this.#options;
    const end: { -readonly [K in keyof steps.PassEnd]: steps.PassEnd[K] } = {
      startedAt,
      settleWaitMs: 0,
      reasons,
      owned: [],
      skipped: 0,
      outcome: { kind: 'error', message: 'not run' },
    };
    try {
      const read = await this.#watcher.read();
      if (read === undefined) return; // stopping: the pass never began
      end.settleWaitMs = read.settleWaitMs;
      const { manifests, revision, gitSync } = read.snapshot;
      const owned = manifests.orgs.filter((o) => steps.ownsOrg(o.org, daemon.shard, settings.orgs));
      end.owned = owned.map(passOrg);
      const set = (this.#tokens = await this.#options.readTokens());
      for (const token of tokens.tokensOf(set)) this.secrets.add(token);
      // A token as the decisions may see it: hashed, never kept (for an org with none, why).
      const tokenKey = (org: string) => {
        const chosen = tokens.tokenFor(set, org);
        return sha256('token' in chosen ? chosen.token : chosen.error).slice(0, 16);
      };
      const start = {
        owned: end.owned,
        reasons,
        changedFiles: read.changedFiles,
        tokenKey,
        revision,
        unattributed: manifests.unattributed.map(({ org: _org, ...problem }) => problem),
      };
      const begun = this.#carry(steps.beginPass(this.#memory, start, this.#clock.now()));
      end.skipped = begun.skipped;
      const due = new Map(begun.due.map((org) => [org.org, org]));
      const { state, transport } = this.#open!;
      const shutdown = this.#shutdown;
      // A client for this pass, on the daemon's transport, that a stop cuts short.
      const client = clientFromSettings(settings, {
        apiUrl: this.#options.apiUrl,
        getToken: tokens.tokenGetter(set),
        mask: this.secrets.mask,
        logger,
        ca: this.#options.ca,
        signal: shutdown.abort,
        stop: shutdown.stopping,
        events: shutdown.events(this.metrics.clientEvents()),
        clock: this.#clock,
        transport,
      });
      const held = this.#held();
      try {
        const report = await reconcile({
          manifests: { ...manifests, orgs: owned.filter((org) => due.has(org.org)) },
          client,
          state,
          logger,
          dryRun: held !== undefined,
          revision,
          maxArchive: settings.maxArchive,
          signal: shutdown.stopping,
          onRoundFailed: (org) =>
            this.#carry(steps.afterFailedRound(this.#memory, org, this.#clock.now())),
          onOrgDone: (org) => {
            const key = tokenKey(org.org);
            this.#carry(steps.afterOrg(this.#memory, org, due.get(org.org), key, this.#around()));
          },
        });
        end.outcome = { kind: 'done', report, cutShort: shutdown.stopping.aborted };
        // Only git-sync names the commit a pass applies.
        if (gitSync && revision !== undefined && !shutdown.stopping.aborted)
          this.#open?.notifier?.statuses(
            revision,
            report.orgs.map((o) => commitStatus(o, held)),
          );
      } finally {
        await client.close();
      }
    } catch (error) {
      end.outcome = { kind: 'error', message: errorMessage(error) };
    }
    const ended = this.#carry(steps.afterPass(this.#memory, end, this.#clock.now()));
    this.#open?.notifier?.notify(ended.events);
    // The next periodic pass (±10% jitter, so replicas drift apart), and the earliest backoff end.
    const { intervalMs } = daemon;
    if (intervalMs > 0) {
      const jittered = Math.round(intervalMs * (0.9 + 0.2 * Math.random()));
      this.#scheduler.at('interval', jittered, 'interval');
    }
    const backoffEnds = steps.nextAttemptAt(this.#memory);
    if (backoffEnds === undefined) this.#scheduler.cancel('backoff');
    else this.#scheduler.at('backoff', backoffEnds - this.#clock.now(), 'backoff');
  }

  /** Why this pass only plans, if so: observe mode, or a closed window (a pass waits for it). */
  #held(): string | undefined {
    const { settings, daemon, logger } = this.#options;
    const now = this.#clock.now();
    const window = windowState(settings.syncWindows ?? [], now);
    if (!window.open && window.opensAt !== undefined) {
      this.#scheduler.at('window', window.opensAt - now, 'sync window opens', { unref: true });
    } else this.#scheduler.cancel('window');
    const held = daemon.observe ? 'observe mode' : window.open ? undefined : waitingWords(window);
    if (held !== undefined) {
      logger.info(
        { mode: daemon.observe ? 'observe' : 'normal', window: windowReport(window) },
        `this pass plans only, nothing is sent: ${held}`,
      );
    }
    return held;
  }

  /** Carries out a step: keeps its memory, writes its log lines, updates the metrics. */
  #carry<S extends steps.Step>(step: S): S {
    this.#memory = step.memory;
    for (const { level, fields, message } of step.logs)
      this.#options.logger[level](fields, message);
    this.metrics.apply(step.metrics);
    this.metrics.ready.set(this.ready.ready ? 1 : 0);
    return step;
  }

  #around(): steps.Surroundings {
    const { intervalMs } = this.#options.daemon;
    return { now: this.#clock.now(), intervalMs, stateWriteError: this.#open?.state.writeError };
  }
}
