/**
 * kustomize itself (kubectl's built-in `kubectl kustomize`, the code `apply -k` runs) on
 * examples/kubernetes or a copy of it: every object it renders is checked against its schema.
 * For the suites that have kubectl (npm run test:system; `.ci/run` installs it).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { type K8sObject, objectsOf, validateObject } from './k8s.ts';
import { tempDir } from './tmp.ts';

export const EXAMPLE_DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));

/** The kinds examples/kubernetes renders (and the chart), in name order. */
export const EXAMPLE_KINDS = [
  'NetworkPolicy',
  'PodDisruptionBudget',
  'Service',
  'ServiceAccount',
  'StatefulSet',
];
/** The same with the monitoring component (the chart's monitoring.enabled). */
export const MONITORING_KINDS = [...EXAMPLE_KINDS, 'PrometheusRule', 'ServiceMonitor'].sort();

/** The kinds of `objects`, in name order. */
export const kinds = (objects: K8sObject[]) => objects.map((o) => o.kind).sort();

/** What the kustomization in `dir` renders, each object checked against its schema. */
export function kustomize(dir: string): K8sObject[] {
  const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  expect(result.error).toBeUndefined();
  expect(result.status, result.stderr).toBe(0);
  const objects = objectsOf(result.stdout);
  for (const object of objects) expect(() => validateObject(object)).not.toThrow();
  return objects;
}

/** The monitoring component, which a kustomization lists commented out, turned on. */
export function turnOnMonitoring(file: string): void {
  const text = readFileSync(file, 'utf8');
  const on = text.replace(/^( {2})# (- (\.\.\/)?monitoring)$/m, '$1$2');
  expect(on, `${file} has no commented monitoring entry`).not.toBe(text);
  writeFileSync(file, on);
}

/** A copy of examples/kubernetes to change, removed after `use`. */
export async function withExampleCopy(use: (dir: string, tmp: string) => void): Promise<void> {
  const tmp = await tempDir();
  try {
    await cp(EXAMPLE_DIR, tmp.path('k'), { recursive: true });
    use(tmp.path('k'), tmp.dir);
  } finally {
    await tmp.cleanup();
  }
}
