/**
 * The daemon keeps policy documents as the manifests say, against the emulator's kosli profile
 * over real HTTP: it uploads them before the environments that attach them, and an edit of a
 * policy file alone (a *.yaml the watcher sees) makes a new version on the next pass.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const world = useDaemonWorld([{ token: 'policy-documents-token-51c2', orgs: null }]);
/** A safety net for a loaded machine, not a timing. */
const WAIT = { timeoutMs: 60_000 };

const POLICY = '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts: {}\n';
const MANIFEST = `org: acme
policies:
  - name: prod-requirements
    description: What production needs
    file: policies/prod-requirements.yaml
environments:
  - name: prod
    type: K8S
    description: Production
    policies: [prod-requirements]
`;

async function versions(): Promise<string[]> {
  const held = (await world.api.getStore()).policies?.['acme'];
  const doc = held?.find(({ name }) => name === 'prod-requirements');
  return doc?.versions.map((v) => v.policy_yaml) ?? [];
}

describe('the daemon and policy documents', () => {
  it('uploads a document before the environment attaching it, and a new version when its file changes', async () => {
    const { api, tmp } = world;
    await tmp.write('manifests/acme.yaml', MANIFEST);
    await tmp.write('manifests/policies/prod-requirements.yaml', POLICY);
    const d = await world.start();
    await waitFor('the first pass', () => d.daemon.status().lastPass !== null, WAIT);
    await d.daemon.idle();
    expect(await versions()).toEqual([POLICY]);
    expect((await api.getStore()).orgs['acme']?.[0]?.policies).toEqual(['prod-requirements']);
    const writes = (await api.getRequests(1000))
      .filter((r) => r.method !== 'GET')
      .map((r) => `${r.method} ${r.path}`);
    expect(writes.slice(0, 2)).toEqual([
      'PUT /api/v2/policies/acme',
      'PUT /api/v2/environments/acme',
    ]);
    expect(d.daemon.status().orgs['acme']?.status).toBe('ok');

    // Only the policy file changes: the watcher sees it, and the pass uploads a version.
    const changed = POLICY.replace('{}', '{ provenance: { required: true } }');
    await writeFile(tmp.path('manifests/policies/prod-requirements.yaml'), changed);
    await waitFor('the new version', async () => (await versions()).length === 2, WAIT);
    await d.daemon.idle();
    expect(await versions()).toEqual([POLICY, changed]);
    expect(
      d.logs().some((line) => line['msg'] === 'update policy document acme/prod-requirements'),
    ).toBe(true);
  });
});
