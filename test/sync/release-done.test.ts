import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { createClient } from '../../src/api/client.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/api/retry-policy.ts';
import { reconcile } from '../../src/engine/reconcile.ts';
import { StateStore } from '../../src/state/store.ts';
import { loadManifests } from '../../src/manifests/load.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { syncWorld, TOKEN } from '../helpers/sync-world.ts';

const logger = pino({ level: 'silent' });
const world = syncWorld();

/** One plan over the tree as it is now; `releaseDone` as the one-shot commands pass it. */
async function planOnce(api: TestEmulator, releaseDone: boolean) {
  const tmp = world.tmp();
  const manifests = await loadManifests({ root: 'manifests', cwd: tmp.dir, maxFileBytes: 1 << 20 });
  const client = createClient({
    apiUrl: new URL(api.url),
    getToken: () => TOKEN,
    concurrency: 2,
    timeoutMs: 5000,
    policy: { ...DEFAULT_RETRY_POLICY, retries: 2, minDelayMs: 5, maxDelayMs: 50 },
    logger,
    clock: systemClock,
  });
  try {
    const state = await StateStore.load(tmp.path('state.json'), logger);
    const report = await reconcile({
      manifests,
      client,
      state,
      logger,
      dryRun: true,
      orgs: new Set(['acme', 'beta', 'gamma']),
      releaseDone,
    });
    return { report, manifests };
  } finally {
    await client.close();
  }
}

describe('a one-shot pass that lets go of each org once it is done', () => {
  it('reports exactly what a pass that keeps the manifests does, and empties only the orgs it did', async () => {
    const api = await world.emulator({
      profile: 'kosli',
      orgs: ['acme', 'beta', 'gamma', 'delta'],
    });
    const tmp = world.tmp();
    await tmp.write(
      'manifests/acme.yaml',
      'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: Web\n' +
        '  - name: all\n    type: logical\n    description: All\n' +
        '    included_environments:\n      - web\n      - db\n',
    );
    await tmp.write(
      'manifests/beta.yaml',
      'org: beta\nenvironments:\n  - name: site\n    type: S3\n    description: Site\n',
    );
    await tmp.write(
      'manifests/more/beta.yaml',
      'org: beta\nenvironments:\n  - name: api\n    type: K8S\n    description: API\n',
    );
    await tmp.write(
      'manifests/gamma.yaml',
      'org: gamma\nenvironments:\n  - name: x\n    type: k8s\n',
    );
    await tmp.write(
      'manifests/delta.yaml',
      'org: delta\nenvironments:\n  - name: y\n    type: S3\n    description: Y\n',
    );
    const kept = await planOnce(api, false);
    const released = await planOnce(api, true);
    expect(released.report).toEqual(kept.report);
    // The member no environment has is located in its file, found again by org and name.
    expect(released.report.orgs.find((o) => o.org === 'acme')?.errors).toMatchObject([
      { file: 'manifests/acme.yaml', line: 11, column: 9 },
    ]);
    expect(released.report.orgs.map((o) => o.status)).toEqual(['invalid', 'ok', 'invalid']);
    // Selected orgs are let go; delta, not selected, is left as it was.
    expect(released.manifests.orgs.map((o) => o.environments.length)).toEqual([0, 0, 1, 0]);
    expect(released.manifests.orgs.map((o) => o.org)).toEqual(['', '', 'delta', '']);
    expect(kept.manifests.orgs.map((o) => o.org)).toEqual(['acme', 'beta', 'delta', 'gamma']);
  });
});
