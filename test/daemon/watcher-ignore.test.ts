/**
 * The daemon's watcher and the ignore rules, with real chokidar over a real folder: what the
 * root's `.envsyncignore` and `--exclude` leave out makes no file event; an edit of the ignore
 * file makes one, and the watch starts again under the new rules.
 */
import { writeFile } from 'node:fs/promises';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManifestWatcher } from '../../src/daemon/watcher.ts';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let watcher: ManifestWatcher | undefined;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  await tmp.cleanup();
});

/** Starts a watcher of `manifests`; its file events are collected, in order. */
async function watch(exclude: string[]): Promise<string[]> {
  const events: string[] = [];
  watcher = new ManifestWatcher({
    settings: { manifests: 'manifests', exclude, maxFileBytes: 1024 * 1024, strict: false },
    cwd: tmp.dir,
    settleMs: 0,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    stop: new AbortController().signal,
    onFileEvent: (reason) => events.push(reason),
    onRetarget: () => undefined,
    pollMs: 60_000,
  });
  await watcher.start();
  return events;
}

/**
 * Writes `file` until the watcher reports it: a watch that starts again is ready at a moment the
 * test cannot see. Each write is an event of its own, so a report is of one of these writes.
 */
async function untilReported(events: readonly string[], file: string): Promise<void> {
  let n = 0;
  await waitFor(
    `an event of ${file}`,
    async () => {
      await writeFile(tmp.path('manifests', file), `org: acme # ${n++}\nenvironments: []\n`);
      return events.some((event) => event.endsWith(` ${file}`));
    },
    { everyMs: 100 },
  );
}

describe('the watcher and the ignore rules', () => {
  it('reports no event for what the rules leave out', async () => {
    await tmp.write('manifests/.envsyncignore', '# not manifests\nk8s/\n*.draft.yaml\n');
    await tmp.write('manifests/acme.yaml', 'org: acme\nenvironments: []\n');
    await tmp.write('manifests/k8s/config.yaml', 'kind: ConfigMap\n');
    const events = await watch(['ci/']);
    // Edits the rules leave out, then an edit they keep, twice: were the first reported, their
    // events would come before the kept edit's (one queue of file events), or with it.
    for (const round of [1, 2]) {
      await writeFile(tmp.path('manifests/k8s/config.yaml'), `kind: ConfigMap # ${round}\n`);
      await tmp.write(`manifests/k8s/new-${round}/deploy.yaml`, 'kind: Deployment\n');
      await tmp.write(`manifests/beta-${round}.draft.yaml`, 'org: beta\n');
      await tmp.write(`manifests/ci/pipeline-${round}.yaml`, 'on: [push]\n');
      await writeFile(tmp.path('manifests/acme.yaml'), `org: acme # ${round}\nenvironments: []\n`);
      await waitFor(
        `round ${round}`,
        () => events.filter((e) => e.endsWith(' acme.yaml')).length >= round,
      );
    }
    expect(events.filter((event) => !event.endsWith(' acme.yaml'))).toEqual([]);
  });

  it('reports an edit of the ignore file, and watches what it no longer leaves out', async () => {
    await tmp.write('manifests/.envsyncignore', 'k8s/\n');
    await tmp.write('manifests/acme.yaml', 'org: acme\nenvironments: []\n');
    await tmp.write('manifests/k8s/acme.yaml', 'org: acme\nenvironments: []\n');
    const events = await watch([]);
    await writeFile(tmp.path('manifests/.envsyncignore'), '# k8s/ is read now\n');
    await waitFor('the ignore file reported', () => events.includes('file change .envsyncignore'));
    await untilReported(events, 'k8s/acme.yaml');
    // And the other way: a folder newly left out is no longer watched.
    await writeFile(tmp.path('manifests/.envsyncignore'), 'k8s/\n');
    await waitFor(
      'the ignore file reported again',
      () => events.filter((event) => event === 'file change .envsyncignore').length === 2,
    );
    await untilReported(events, 'acme.yaml');
    const from = events.length;
    await writeFile(
      tmp.path('manifests/k8s/acme.yaml'),
      'org: acme # left out\nenvironments: []\n',
    );
    await untilReported(events, 'acme.yaml');
    expect(events.slice(from).filter((event) => event.includes('k8s/'))).toEqual([]);
  });
});
