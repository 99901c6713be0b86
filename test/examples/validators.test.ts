import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  applyJsonPatch,
  type K8sObject,
  objectFiles,
  objectsOf,
  patchOperations,
  readKustomization,
  validateObject,
} from '../helpers/k8s.ts';
import { tempDir } from '../helpers/tmp.ts';

/**
 * What users copy is checked by the validators of its own ecosystem: the Kubernetes objects by
 * kubernetes-models' schemas, the GitHub workflows (the examples, and the repository's own CI and
 * release workflows) by action-validator. Each check is also seen to refuse a broken copy, so it
 * cannot pass by validating nothing.
 */

const K8S_DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));
const GHA_DIR = fileURLToPath(new URL('../../examples/github-actions/', import.meta.url));
const WORKFLOWS_DIR = fileURLToPath(new URL('../../.github/workflows/', import.meta.url));
const ACTION_FILE = fileURLToPath(new URL('../../action.yml', import.meta.url));

/** action-validator's core (WebAssembly), resolved as its command line resolves it. */
const validator = createRequire(
  new URL('../../node_modules/@action-validator/cli/cli.mjs', import.meta.url),
)('@action-validator/core') as {
  validateAction(src: string): { errors: unknown[] };
  validateWorkflow(src: string): { errors: unknown[] };
};

function objectsIn(file: string): K8sObject[] {
  return objectsOf(readFileSync(`${K8S_DIR}${file}`, 'utf8'));
}

/**
 * What `action-validator FILE` decides, without a process (and a WebAssembly compile) per file:
 * its command line reads action.yml or action.yaml as action metadata and anything else as a
 * workflow, fails on any error and prints the result as JSON.
 */
function actionValidator(file: string) {
  const text = readFileSync(file, 'utf8');
  const result = /action\.ya?ml$/.test(file)
    ? validator.validateAction(text)
    : validator.validateWorkflow(text);
  return { status: result.errors.length > 0 ? 1 : 0, stdout: '', stderr: JSON.stringify(result) };
}

// The kustomizations are kustomize's, not objects: test/system/kustomize.test.ts renders them.
const k8sFiles = objectFiles(K8S_DIR);
const workflows = readdirSync(GHA_DIR).filter((f) => /\.ya?ml$/.test(f));
const ownWorkflows = readdirSync(WORKFLOWS_DIR).filter((f) => /\.ya?ml$/.test(f));

describe('examples/kubernetes against the Kubernetes schemas (kubernetes-models)', () => {
  it.each(k8sFiles)('%s: every object is valid for its apiVersion and kind', (file) => {
    const objects = objectsIn(file);
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) expect(() => validateObject(object), file).not.toThrow();
  });

  it("sharded/: base/'s StatefulSet with the kustomization's patch applied is valid too", () => {
    const [patch, ...more] = readKustomization(`${K8S_DIR}sharded`).patches ?? [];
    expect(more).toEqual([]);
    const [statefulSet] = objectsIn('base/statefulset.yaml');
    const sharded = applyJsonPatch(statefulSet, patchOperations(patch?.patch ?? ''));
    expect(sharded).not.toEqual(statefulSet);
    expect(() => validateObject(sharded as K8sObject)).not.toThrow();
  });

  it('the schema check refuses a broken object', () => {
    const [statefulSet] = objectsIn('base/statefulset.yaml');
    const broken = structuredClone(statefulSet) as K8sObject & {
      spec: { template: { spec: { containers: { ports?: unknown }[] } } };
    };
    const container = broken.spec.template.spec.containers[0];
    if (container === undefined) throw new Error('the example StatefulSet has no container');
    container.ports = [{ containerPort: 'http' }];
    expect(() => validateObject(broken)).toThrow(/containerPort/);
  });
});

describe('examples/github-actions against the GitHub Actions schema (action-validator)', () => {
  it.each(workflows)('%s is a valid workflow', (file) => {
    const result = actionValidator(`${GHA_DIR}${file}`);
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  });

  it('action-validator refuses a broken workflow', async () => {
    const tmp = await tempDir();
    try {
      const text = readFileSync(`${GHA_DIR}${workflows[0] ?? ''}`, 'utf8');
      const file = tmp.path('broken.yml');
      writeFileSync(file, text.replace(/^jobs:\n/m, 'jobs:\n  broken:\n    stepz: []\n'));
      const result = actionValidator(file);
      expect(result.status).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`).toContain('/jobs/broken');
    } finally {
      await tmp.cleanup();
    }
  });
});

describe("the repository's own workflows against the GitHub Actions schema (action-validator)", () => {
  it('holds the CI and the release workflows', () => {
    expect(ownWorkflows.sort()).toEqual(['ci.yml', 'release.yml']);
  });

  it.each(ownWorkflows)('.github/workflows/%s is a valid workflow', (file) => {
    const result = actionValidator(`${WORKFLOWS_DIR}${file}`);
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  });
});

describe('action.yml against the GitHub Actions metadata schema (action-validator)', () => {
  it('action.yml is valid action metadata', () => {
    const result = actionValidator(ACTION_FILE);
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  });

  it('action-validator refuses broken action metadata', async () => {
    const tmp = await tempDir();
    try {
      const file = tmp.path('action.yml');
      writeFileSync(
        file,
        readFileSync(ACTION_FILE, 'utf8').replace(/^  using: composite$/m, '  using: compost'),
      );
      const result = actionValidator(file);
      expect(result.status).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`).toContain('/runs');
    } finally {
      await tmp.cleanup();
    }
  });
});
