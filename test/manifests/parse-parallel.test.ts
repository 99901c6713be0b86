import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverManifestFiles } from '../../src/manifests/discover.ts';
import { loadManifests, type ManifestSet } from '../../src/manifests/load.ts';
import { parseManifest, sharedValues } from '../../src/manifests/parse.ts';
import {
  encodeOutcome,
  outcomeDecoder,
  parseFile,
  parseFilesInParallel,
} from '../../src/manifests/parse-parallel.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const env = (name: string, extra = '') =>
  `  - name: ${name}\n    type: K8S\n    description: ${name} of a long description here\n${extra}`;

/**
 * A tree with every kind of file a load meets: valid ones (some orgs spread over several files
 * and documents), ones only the located path reads (an alias), broken YAML, a schema error, a name
 * declared twice across files, a member naming nothing, an empty file and a binary one.
 */
async function writeMixedTree(): Promise<void> {
  for (let i = 0; i < 90; i++) {
    const org = `org-${String(i % 30).padStart(2, '0')}`; // each org in three files
    const policies = ['', '    policies: [pci, baseline]\n', '    policies: [baseline]\n'][i % 3];
    await tmp.write(
      `manifests/team-${i % 4}/file-${String(i).padStart(3, '0')}.yaml`,
      `# file ${i}\norg: ${org}\nenvironments:\n${env(`env-${i}`, policies)}${env(`other-${i}`, '    include_scaling: true\n')}` +
        (i % 10 === 0 ? `---\norg: shared-${i % 20}\nenvironments:\n${env(`doc2-${i}`)}` : ''),
    );
  }
  await tmp.write(
    'manifests/team-0/alias.yaml',
    `org: org-05\nenvironments:\n  - &a\n    name: aliased\n    type: S3\n    description: d\n`,
  );
  await tmp.write('manifests/team-1/broken.yaml', 'org: org-07\nenvironments: [\n');
  await tmp.write(
    'manifests/team-1/schema.yaml',
    `org: org-08\nenvironments:\n  - name: x\n    type: k8s\n    description: y\n`,
  );
  await tmp.write('manifests/team-2/twice.yaml', `org: org-09\nenvironments:\n${env('env-9')}`);
  await tmp.write('manifests/team-2/nothing.yaml', '# nothing here\n');
  await tmp.write('manifests/team-2/unnamed.yaml', '- a\n- b\n');
  await tmp.write('manifests/team-3/binary.yaml', 'org: a\u0000\n');
}

const load = (parseInWorker: boolean): Promise<ManifestSet> =>
  loadManifests({ root: 'manifests', cwd: tmp.dir, maxFileBytes: 1024 * 1024, parseInWorker });

/** What a load says, as plain data (its `locate` asked for every environment of every org). */
function said(set: ManifestSet) {
  return {
    orgs: set.orgs,
    unattributed: set.unattributed,
    fileCount: set.fileCount,
    located: set.orgs.flatMap((org) =>
      org.environments.map((e) => set.locate?.(org.org, e, ['description'])),
    ),
  };
}

describe('parsing a large tree on two threads', () => {
  it('gives a load deep-equal to the one made on one thread: problems, order and positions', async () => {
    await writeMixedTree();
    const sequential = said(await load(false));
    const parallel = said(await load(true));
    expect(parallel).toEqual(sequential);
    // The tree has what it was built to have: problems of every kind, and orgs over many files.
    const problems = sequential.orgs.flatMap((o) => o.problems).map((p) => p.message);
    expect(problems.some((m) => m.includes('declared twice'))).toBe(true);
    expect(problems.some((m) => m.includes('k8s'))).toBe(true);
    expect(sequential.unattributed.map((p) => p.file)).toContain(
      path.join('manifests', 'team-3', 'binary.yaml'),
    );
    expect(sequential.orgs.find((o) => o.org === 'org-01')?.files).toHaveLength(3);
    expect(sequential.orgs.find((o) => o.org === 'org-05')?.environments.length).toBe(7);
  });

  it('gives every file the outcome this thread would, when the worker parses all of them', async () => {
    await writeMixedTree();
    const { files } = await discoverManifestFiles('manifests', tmp.dir);
    const { outcomes, byWorker } = await parseFilesInParallel(files, 1024 * 1024, sharedValues(), {
      mainThread: false,
    });
    expect(byWorker).toBe(files.length);
    const shared = sharedValues();
    expect(outcomes).toEqual(files.map((file) => parseFile(file, 1024 * 1024, shared)));
  });

  it('shares names and lists among files whichever thread read them, as one thread does', async () => {
    await writeMixedTree();
    const set = await load(true);
    // The located path (positions kept) makes its own lists, on either thread.
    const envs = set.orgs.flatMap((o) => o.environments).filter((e) => e.source === undefined);
    const withPci = envs.filter((e) => e.policies.length === 2);
    expect(withPci.length).toBeGreaterThan(10);
    for (const e of withPci) expect(e.policies).toBe(withPci[0]?.policies);
    expect(Object.isFrozen(withPci[0]?.policies)).toBe(true);
    const empty = envs.filter((e) => e.policies.length === 0);
    for (const e of empty) expect(e.policies).toBe(empty[0]?.policies);
  });
});

describe('a worker result crossing to the main thread', () => {
  const texts = [
    `org: acme\nenvironments:\n${env('prod', '    policies: [b, a, a]\n')}${env('dev', '    include_scaling: true\n    require_provenance: true\n')}`,
    `org: a\nenvironments: []\n---\n# c\n---\norg: b\nenvironments:\n${env('x')}`,
    '',
    `org: acme\nenvironments:\n  - &a\n    name: aliased\n    type: S3\n    description: d\n`,
    'org: acme\nenvironments: [\n',
    `org: acme\nenvironments:\n${env('x')}${env('x')}`,
  ];

  it.each(texts.map((text, i) => [i, text] as const))(
    'decodes text %i to what parsing it gave',
    (_, text) => {
      const outcome = { ok: true as const, result: parseManifest(text, 'f.yaml') };
      const decode = outcomeDecoder(sharedValues());
      expect(decode(structuredClone(encodeOutcome(outcome)))).toEqual(outcome);
    },
  );

  it('passes a file that cannot be read as it is', () => {
    const outcome = { ok: false as const, message: 'binary file (contains NUL bytes), not YAML' };
    expect(outcomeDecoder(sharedValues())(structuredClone(encodeOutcome(outcome)))).toEqual(
      outcome,
    );
  });
});
