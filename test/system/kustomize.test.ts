/**
 * `kubectl apply -k examples/kubernetes` (and `-k examples/kubernetes/sharded`, with or without
 * the monitoring component) works: kustomize itself (kubectl's built-in `kubectl kustomize`, the
 * code `apply -k` runs) renders each kustomization, and every object it renders is valid for the
 * Kubernetes schemas. `.ci/run` installs kubectl when it is missing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  applyJsonPatch,
  type K8sObject,
  objectsOf,
  patchOperations,
  readKustomization,
  validateObject,
} from '../helpers/k8s.ts';
import { tempDir } from '../helpers/tmp.ts';

const DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));

/** What the kustomization in `dir` renders, each object checked against its schema. */
function kustomize(dir: string): K8sObject[] {
  const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  expect(result.error).toBeUndefined();
  expect(result.status, result.stderr).toBe(0);
  const objects = objectsOf(result.stdout);
  for (const object of objects) expect(() => validateObject(object)).not.toThrow();
  return objects;
}

const kinds = (objects: K8sObject[]) => objects.map((o) => o.kind).sort();
const BASE_KINDS = [
  'NetworkPolicy',
  'PodDisruptionBudget',
  'Service',
  'ServiceAccount',
  'StatefulSet',
];
const MONITORING_KINDS = [...BASE_KINDS, 'PrometheusRule', 'ServiceMonitor'].sort();

/** The `components:` entry a kustomization carries commented out, turned on. */
function turnOnComponents(file: string): void {
  const text = readFileSync(file, 'utf8');
  const on = text.replace(/^# components:\n# ( {2}- .+)$/m, 'components:\n$1');
  expect(on, `${file} has no commented components entry`).not.toBe(text);
  writeFileSync(file, on);
}

/** A copy of the examples to change, removed after `use`. */
async function withCopy(use: (dir: string, tmp: string) => void): Promise<void> {
  const tmp = await tempDir();
  try {
    await cp(DIR, tmp.path('k'), { recursive: true });
    use(tmp.path('k'), tmp.dir);
  } finally {
    await tmp.cleanup();
  }
}

describe('examples/kubernetes kustomizations', () => {
  it('the one-replica variant renders the StatefulSet and what goes with it, each valid for its schema', () => {
    const objects = kustomize(DIR);
    expect(kinds(objects)).toEqual(BASE_KINDS);
    // The images transformer is what users edit: it reaches the envsync container.
    const statefulSet = objects.find((o) => o.kind === 'StatefulSet');
    expect(JSON.stringify(statefulSet)).toContain('"image":"registry.example.com/envsync:0.2.0"');
  });

  it("sharded/ renders the same objects, with the StatefulSet test/examples reads (base/'s, patched)", () => {
    const single = kustomize(DIR);
    const sharded = kustomize(path.join(DIR, 'sharded'));
    const others = (objects: K8sObject[]) => objects.filter((o) => o.kind !== 'StatefulSet');
    expect(others(sharded)).toEqual(others(single));
    // What test/examples/kubernetes.test.ts checks without kustomize must be what kustomize makes.
    const base = parse(readFileSync(path.join(DIR, 'base/statefulset.yaml'), 'utf8')) as unknown;
    const [patch] = readKustomization(path.join(DIR, 'sharded')).patches ?? [];
    const expected = applyJsonPatch(base, patchOperations(patch?.patch ?? ''));
    expect(sharded.find((o) => o.kind === 'StatefulSet')).toEqual(expected);
    expect(expected).not.toEqual(single.find((o) => o.kind === 'StatefulSet'));
  });

  it('the monitoring component adds the ServiceMonitor and the PrometheusRule, from either variant', async () => {
    await withCopy((dir) => {
      turnOnComponents(path.join(dir, 'kustomization.yaml'));
      turnOnComponents(path.join(dir, 'sharded/kustomization.yaml'));
      expect(kinds(kustomize(dir))).toEqual(MONITORING_KINDS);
      expect(kinds(kustomize(path.join(dir, 'sharded')))).toEqual(MONITORING_KINDS);
    });
  });

  it('an overlay of your own turns the component on as well, with the same objects', async () => {
    await withCopy((dir, tmp) => {
      const overlay = path.join(tmp, 'overlay');
      const file = path.join(overlay, 'kustomization.yaml');
      mkdirSync(overlay);
      writeFileSync(
        file,
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n' +
          'resources:\n  - ../k\ncomponents:\n  - ../k/monitoring\n',
      );
      const objects = kustomize(overlay);
      turnOnComponents(path.join(dir, 'kustomization.yaml'));
      expect(objects).toEqual(kustomize(dir));
      expect(kinds(objects)).toEqual(MONITORING_KINDS);
    });
  });

  it('kustomize refuses a kustomization that names a missing file (the check is real)', async () => {
    await withCopy((dir) => {
      const file = path.join(dir, 'base/kustomization.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('- service.yaml', '- missing.yaml'));
      const result = spawnSync('kubectl', ['kustomize', dir], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('missing.yaml');
    });
  });
});
