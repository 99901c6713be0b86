import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Service, Secret } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { tempDir } from '../helpers/tmp.ts';

/**
 * What users copy is checked by the validators of its own ecosystem: the Kubernetes objects by
 * kubernetes-models' schemas, the GitHub workflows by action-validator. Each check is also seen
 * to refuse a broken copy, so it cannot pass by validating nothing.
 */

const K8S_DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));
const GHA_DIR = fileURLToPath(new URL('../../examples/github-actions/', import.meta.url));
const ACTION_VALIDATOR = fileURLToPath(
  new URL('../../node_modules/@action-validator/cli/cli.mjs', import.meta.url),
);

interface Validatable {
  validate(): void;
}
type Model = new (data: never) => Validatable;

const MODELS: Record<string, Model> = {
  'v1/Service': Service,
  'v1/Secret': Secret,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  [key: string]: unknown;
}

function objectsIn(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(`${K8S_DIR}${file}`, 'utf8'))
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

function validateObject(object: K8sObject): void {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new model(object as never).validate();
}

function actionValidator(file: string) {
  return spawnSync(process.execPath, [ACTION_VALIDATOR, file], { encoding: 'utf8' });
}

const k8sFiles = readdirSync(K8S_DIR).filter((f) => /\.ya?ml$/.test(f));
const workflows = readdirSync(GHA_DIR).filter((f) => /\.ya?ml$/.test(f));

describe('examples/kubernetes against the Kubernetes schemas (kubernetes-models)', () => {
  it.each(k8sFiles)('%s: every object is valid for its apiVersion and kind', (file) => {
    const objects = objectsIn(file);
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) expect(() => validateObject(object), file).not.toThrow();
  });

  it('the schema check refuses a broken object', () => {
    const [deployment] = objectsIn('deployment.yaml').filter((o) => o.kind === 'Deployment');
    const broken = structuredClone(deployment) as K8sObject & {
      spec: { template: { spec: { containers: { ports?: unknown }[] } } };
    };
    const container = broken.spec.template.spec.containers[0];
    if (container === undefined) throw new Error('the example Deployment has no container');
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
