/**
 * `kubectl apply -k examples/kubernetes` works: kustomize itself (kubectl's built-in
 * `kubectl kustomize`, the code `apply -k` runs) renders the kustomization, and every object it
 * renders is valid for the Kubernetes schemas. `.ci/run` installs kubectl when it is missing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type K8sObject, validateObject } from '../helpers/k8s.ts';
import { tempDir } from '../helpers/tmp.ts';

const DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));

function kustomize(dir: string) {
  return spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
}

describe('examples/kubernetes/kustomization.yaml', () => {
  it('renders with kustomize into the Deployment and its Service, each valid for its schema', () => {
    const result = kustomize(DIR);
    expect(result.error).toBeUndefined();
    expect(result.status, result.stderr).toBe(0);
    const objects = parseAllDocuments(result.stdout)
      .map((doc) => doc.toJS() as K8sObject | null)
      .filter((o): o is K8sObject => o !== null);
    expect(objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'Service']);
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();
    // The images transformer is what users edit: it reaches the envsync container.
    expect(result.stdout).toContain('image: registry.example.com/envsync:0.2.0');
  });

  it('kustomize refuses a kustomization that names a missing file (the check is real)', async () => {
    const tmp = await tempDir();
    try {
      await cp(DIR, tmp.path('k'), { recursive: true });
      const file = tmp.path('k/kustomization.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('- service.yaml', '- missing.yaml'));
      const result = kustomize(tmp.path('k'));
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('missing.yaml');
    } finally {
      await tmp.cleanup();
    }
  });
});
