/**
 * `envsync run` among other files: what `.envsyncignore` and `--exclude` leave out is neither read
 * nor watched (an edit there starts no pass), other YAML is skipped with one line when it is new,
 * an edit of the ignore file is a pass under the new rules, and a root without a manifest is said
 * once. An in-process daemon, real files,
 * real chokidar, the emulator over HTTP.
 */
import { rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { manifestOf as manifest, useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const world = useDaemonWorld([{ token: 'ignore-daemon-token', orgs: null }]);
const daemon = () => world.start({ flags: { exclude: ['ci/'] } });
const description = (org: string, name: string) => world.description(org, name);

describe('envsync run and the ignore rules', () => {
  it('never reads nor watches what they leave out, and names a file of other YAML once', async () => {
    await world.tmp.write('manifests/.envsyncignore', 'k8s/\n');
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'one' }));
    // Read, these would give acme another environment.
    await world.tmp.write('manifests/k8s/acme.yaml', manifest('acme', { shadow: 'k8s' }));
    await world.tmp.write('manifests/ci/acme.yaml', manifest('acme', { shadow: 'ci' }));
    await world.tmp.write('manifests/kube/config.yaml', 'apiVersion: v1\nkind: ConfigMap\n');
    const d = await daemon();
    await waitFor('first pass', async () => (await description('acme', 'prod')) === 'one');
    // Edits of what the rules leave out, then an edit they keep, twice over.
    for (const text of ['two', 'three']) {
      await writeFile(
        world.tmp.path('manifests/k8s/acme.yaml'),
        manifest('acme', { shadow: text }),
      );
      await world.tmp.write(`manifests/ci/${text}.yaml`, manifest('acme', { shadow: text }));
      await world.tmp.write(`manifests/k8s/${text}/x.yaml`, manifest('acme', { shadow: text }));
      await writeFile(world.tmp.path('manifests/acme.yaml'), manifest('acme', { prod: text }));
      await waitFor(text, async () => (await description('acme', 'prod')) === text);
    }
    await d.daemon.idle();
    expect(await description('acme', 'shadow')).toBeUndefined();
    const logs = d.logs();
    const triggers = logs.flatMap((line) =>
      Array.isArray(line['trigger']) ? (line['trigger'] as string[]) : [],
    );
    expect(triggers.filter((reason) => reason.startsWith('file '))).not.toEqual([]);
    expect(triggers.filter((reason) => /k8s|ci\//.test(reason))).toEqual([]);
    // Skipped at the first pass, with one line; the passes after it do not repeat it.
    expect(logs.filter((line) => String(line['msg']).includes('kube/config.yaml'))).toEqual([
      expect.objectContaining({
        level: 30,
        file: 'manifests/kube/config.yaml',
        msg: 'manifests/kube/config.yaml: not a manifest: no org and no environments; skipped',
      }),
    ]);
  });

  it('runs a pass when the ignore file changes, and watches what it no longer leaves out', async () => {
    await world.tmp.write('manifests/.envsyncignore', 'k8s/\n');
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'one' }));
    await world.tmp.write('manifests/k8s/acme.yaml', manifest('acme', { web: 'k8s one' }));
    const d = await daemon();
    await waitFor('first pass', async () => (await description('acme', 'prod')) === 'one');
    expect(await description('acme', 'web')).toBeUndefined();
    await writeFile(world.tmp.path('manifests/.envsyncignore'), '# k8s/ holds manifests now\n');
    await waitFor('k8s/ read', async () => (await description('acme', 'web')) === 'k8s one');
    await d.daemon.idle();
    expect(d.daemon.status().lastPass?.trigger).toContain('file change .envsyncignore');
    // The watch started again under the new rules: an edit in k8s/ alone is a pass.
    let n = 0;
    await waitFor(
      'an edit in k8s/ applied',
      async () => {
        await writeFile(
          world.tmp.path('manifests/k8s/acme.yaml'),
          manifest('acme', { web: `k8s ${++n}` }),
        );
        await d.daemon.idle();
        return (await description('acme', 'web')) === `k8s ${n}`;
      },
      { everyMs: 200 },
    );
  });

  it('warns once when the root holds no manifest, and again only after one came back and left', async () => {
    await world.tmp.write('manifests/acme.yaml.bak', manifest('acme', { prod: 'old' }));
    const d = await daemon();
    await waitFor('first pass', () => d.passes() >= 1);
    const EMPTY =
      'no manifest found in manifests: no *.yaml or *.yml file to read; nothing is declared, so nothing is planned or sent';
    const said = () => d.logs().filter((line) => line['msg'] === EMPTY);
    // Passes of an empty root say it once.
    d.daemon.trigger('test');
    await d.daemon.idle();
    expect(said()).toEqual([expect.objectContaining({ level: 40, root: 'manifests' })]);
    // A manifest comes, then goes: the root is empty again, and that is said again.
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'one' }));
    await waitFor('acme applied', async () => (await description('acme', 'prod')) === 'one');
    await rm(world.tmp.path('manifests/acme.yaml'));
    await waitFor('said again', () => said().length === 2);
  });
});
