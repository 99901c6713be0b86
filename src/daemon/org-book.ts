import { createHash } from 'node:crypto';
import {
  isDue,
  nextBackoff,
  orgsToLook,
  type Backoff,
  type OrgOutcomes,
} from '../core/daemon-policy.ts';
import { compareNames } from '../core/names.ts';
import type { OrgReport } from '../core/report.ts';
import type { OrgManifest } from '../manifests/load.ts';
import { orgStatusAfter, type OrgStatus } from './status.ts';

/** What an org's failure happened with: its manifests and the token (hashed, never kept). */
function fingerprintOrg(org: OrgManifest, token: string): string {
  const tokenHash = createHash('sha256').update(token).digest('hex').slice(0, 16);
  return `${tokenHash}:${JSON.stringify(org.environments.map(({ source: _source, ...env }) => env))}`;
}

/**
 * What the daemon remembers of each org between passes: its status for `/status`, its backoff
 * while it fails, and the files that served it (a change to one of them touches the org). The
 * decisions are core/daemon-policy.ts's.
 */
export class OrgBook {
  readonly #status = new Map<string, OrgStatus>();
  readonly #backoff = new Map<string, Backoff>();
  readonly #files = new Map<string, ReadonlySet<string>>();

  /** Forgets the orgs that are not in `owned` (gone from the manifests, or another shard's). */
  keepOnly(owned: readonly OrgManifest[]): string[] {
    const names = new Set(owned.map((org) => org.org));
    const forgotten = [...this.#status.keys()].filter((org) => !names.has(org));
    for (const org of forgotten) {
      this.#status.delete(org);
      this.#backoff.delete(org);
      this.#files.delete(org);
    }
    return forgotten;
  }

  /**
   * The orgs a pass reconciles: those it looks at, less those backing off whose time has not
   * come (unless their manifests or the token changed). Then remembers which files serve each.
   */
  select(
    owned: readonly OrgManifest[],
    reasons: readonly string[],
    changedFiles: ReadonlySet<string> | undefined,
    token: string,
    now: number,
  ): { candidates: number; due: OrgManifest[] } {
    const candidates = orgsToLook(owned, reasons, changedFiles, this.#files);
    const due = candidates.filter((org) =>
      isDue(this.#backoff.get(org.org), now, fingerprintOrg(org, token)),
    );
    for (const org of owned) this.#files.set(org.org, new Set(org.files));
    return { candidates: candidates.length, due };
  }

  /** Records an org's outcome; returns its backoff when it failed. */
  record(
    report: OrgReport,
    manifest: OrgManifest | undefined,
    token: string,
    now: number,
    intervalMs: number,
  ): { status: OrgStatus; backoff: Backoff | undefined } {
    let backoff: Backoff | undefined;
    if (report.status === 'failed' && manifest !== undefined) {
      backoff = nextBackoff(
        this.#backoff.get(report.org),
        now,
        intervalMs,
        fingerprintOrg(manifest, token),
      );
      this.#backoff.set(report.org, backoff);
    } else {
      this.#backoff.delete(report.org);
    }
    const status = orgStatusAfter(report, this.#status.get(report.org), now, backoff);
    this.#status.set(report.org, status);
    return { status, backoff };
  }

  /**
   * Shows an org as failed as soon as one of its rounds fails, before the pass decides whether
   * it recovers (its backoff is decided by `record` when the org is done).
   */
  noteFailedRound(report: OrgReport, now: number): void {
    const backoff = this.#backoff.get(report.org);
    const status = orgStatusAfter(report, this.#status.get(report.org), now, backoff);
    this.#status.set(report.org, { ...status, status: 'failed' });
  }

  /** How the orgs fared last: how many there are, failing, and invalid. */
  outcomes(): OrgOutcomes {
    let failed = 0;
    let invalid = 0;
    for (const { status } of this.#status.values()) {
      if (status === 'failed') failed++;
      else if (status === 'invalid') invalid++;
    }
    return { total: this.#status.size, failed, invalid };
  }

  /** Every org's status, in name order. */
  statuses(): Record<string, OrgStatus> {
    return Object.fromEntries([...this.#status.entries()].sort(([a], [b]) => compareNames(a, b)));
  }

  /** Changes still pending over every org. */
  pending(): number {
    return [...this.#status.values()].reduce((n, status) => n + status.pending, 0);
  }

  /** When the first org backing off is due (ms since the epoch), if any is. */
  nextAttemptAt(): number | undefined {
    const next = Math.min(...[...this.#backoff.values()].map((b) => b.nextAttemptAt));
    return Number.isFinite(next) ? next : undefined;
  }
}
