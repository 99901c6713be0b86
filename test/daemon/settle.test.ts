import { mkdir, open, rename, symlink, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const world = useDaemonWorld([{ token: 'settle-test-token-a81e', orgs: null }]);

const FULL =
  'the full description of the production cluster, written in two halves by a slow writer';
/** A manifest whose first half is itself valid YAML, with the description cut short. */
const manifest = (text: string) =>
  `org: acme\nenvironments:\n  - name: prod\n    type: K8S\n    description: ${text}\n`;

const daemon = (flags: Record<string, string>) => world.start({ flags });
const description = () => world.description('acme', 'prod');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the daemon reads only settled files', () => {
  it.each([
    ['a writer that writes half a file, pauses 1 s and writes the rest', false],
    ['a pass that starts right after a half write, before the watcher may have seen it', true],
  ])('%s: only the full text is ever sent', async (_title, webhook) => {
    await world.tmp.write('manifests/acme.yaml', manifest('first'));
    // The default --settle; the interval off, so only file events (and the webhook) start passes.
    const d = await daemon({ settle: '1500ms', 'webhook-min-interval': '0' });
    await waitFor('first pass', async () => (await description()) === 'first');
    await d.daemon.idle();
    const puts = async () =>
      (await world.api.getRequests(1000)).filter((r) => r.method !== 'GET').length;
    const putsBefore = await puts();

    const text = manifest(FULL);
    const cut = text.indexOf(FULL) + Math.floor(FULL.length / 2);
    expect(text.slice(0, cut).endsWith('\n')).toBe(false); // a valid manifest, its text cut short
    const file = await open(world.tmp.path('manifests/acme.yaml'), 'w');
    await file.write(text.slice(0, cut));
    await file.sync();
    const wroteAt = Date.now();
    // A webhook at once: its pass may read before the file event arrives; the file's own time
    // says it is still being written.
    if (webhook) d.daemon.webhook();
    await sleep(Math.max(0, 1000 - (Date.now() - wroteAt)));
    await file.write(text.slice(cut));
    await file.close();

    await waitFor('the full description', async () => (await description()) === FULL);
    await d.daemon.idle();
    // One write after the write began: the full text (a truncated one would be a second one).
    expect((await puts()) - putsBefore).toBe(1);
    expect(d.logs().filter((l) => l['msg'] === 'update acme/prod')).toHaveLength(1);
  });

  it('a git-sync swap is read at once, without waiting for the settle time', async () => {
    // git-sync's layout: <root>/current -> .worktrees/<hash>, the worktree complete before the swap.
    await mkdir(world.tmp.path('git/.worktrees/aaa/manifests'), { recursive: true });
    await writeFile(world.tmp.path('git/.worktrees/aaa/manifests/acme.yaml'), manifest('one'));
    await symlink('.worktrees/aaa', world.tmp.path('git/current'));
    // A settle time far longer than the test's waits: a swap that waited for it would time out.
    const d = await daemon({ settle: '10m', manifests: 'git/current/manifests' });
    await waitFor('first pass', async () => (await description()) === 'one');
    await mkdir(world.tmp.path('git/.worktrees/bbb/manifests'), { recursive: true });
    await writeFile(world.tmp.path('git/.worktrees/bbb/manifests/acme.yaml'), manifest('two'));
    await symlink('.worktrees/bbb', world.tmp.path('git/current.tmp'));
    await rename(world.tmp.path('git/current.tmp'), world.tmp.path('git/current'));
    await waitFor('swap applied', async () => (await description()) === 'two');
    expect(d.daemon.status().revision).toBe('bbb');
  });
});
