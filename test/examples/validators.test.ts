/**
 * What users copy is checked by the validators of its own ecosystem: the Kubernetes objects by
 * kubernetes-models' schemas, the GitHub workflows and action.yml by action-validator. Each check
 * is also seen to refuse a broken copy, so it cannot pass by validating nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
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

const K8S_DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** action-validator's core (WebAssembly), resolved as its command line resolves it. */
const validator = createRequire(
  new URL('../../node_modules/@action-validator/cli/cli.mjs', import.meta.url),
)('@action-validator/core') as {
  validateAction(src: string): { errors: unknown[] };
  validateWorkflow(src: string): { errors: unknown[] };
};

const objectsIn = (file: string): K8sObject[] =>
  objectsOf(readFileSync(`${K8S_DIR}${file}`, 'utf8'));

/**
 * The errors `action-validator FILE` finds, without a process (and a WebAssembly compile) per
 * file: its command line reads action.yml as action metadata and anything else as a workflow.
 */
function actionErrors(file: string, text = readFileSync(`${REPO}${file}`, 'utf8')): string {
  const result =
    file === 'action.yml' ? validator.validateAction(text) : validator.validateWorkflow(text);
  return result.errors.length === 0 ? '' : JSON.stringify(result);
}

const yamlIn = (dir: string) =>
  readdirSync(`${REPO}${dir}`)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => `${dir}${f}`);
const workflows = yamlIn('examples/github-actions/');
const ownWorkflows = yamlIn('.github/workflows/');

describe('examples/kubernetes against the Kubernetes schemas (kubernetes-models)', () => {
  // The kustomizations are kustomize's, not objects: test/system/kustomize.test.ts renders them.
  it.each(objectFiles(K8S_DIR))('%s: every object is valid for its apiVersion and kind', (file) => {
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

describe('the GitHub Actions schemas (action-validator)', () => {
  it('the repository has the CI and the release workflows', () => {
    expect(ownWorkflows.sort()).toEqual([
      '.github/workflows/ci.yml',
      '.github/workflows/release.yml',
    ]);
  });

  it.each([...workflows, ...ownWorkflows, 'action.yml'])('%s is valid', (file) => {
    expect(actionErrors(file)).toBe('');
  });

  it.each([
    [workflows[0] ?? '', /^jobs:\n/m, 'jobs:\n  broken:\n    stepz: []\n', '/jobs/broken'],
    ['action.yml', /^ {2}using: composite$/m, '  using: compost', '/runs'],
  ])('action-validator refuses a broken %s', (file, from, to, where) => {
    const text = readFileSync(`${REPO}${file}`, 'utf8');
    expect(text.replace(from, to)).not.toBe(text);
    expect(actionErrors(file, text.replace(from, to))).toContain(where);
  });
});
