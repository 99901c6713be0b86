/**
 * The Kubernetes schemas the examples and the chart are checked against (kubernetes-models), by
 * apiVersion and kind: an object of a kind with no schema here is an error, never a pass. What the
 * examples' kustomizations hold, read without kustomize (test/system/kustomize.test.ts holds this
 * reading to what kustomize itself renders). And an envsync container's flags, read by `run`'s
 * own parser.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { Service, Secret, ServiceAccount } from 'kubernetes-models/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { parse, parseAllDocuments } from 'yaml';
import { DAEMON_SETTINGS } from '../../src/config/daemon-settings.ts';
import { flagOptions } from '../../src/config/flags.ts';
import type { FlagsOf } from '../../src/config/setting.ts';
import { GENERAL_SETTINGS, SETTINGS } from '../../src/config/settings.ts';

interface Validatable {
  validate(): void;
}
type Model = new (data: never) => Validatable;

const MODELS: Record<string, Model> = {
  'v1/Service': Service,
  'v1/Secret': Secret,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/StatefulSet': StatefulSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

export interface K8sObject {
  apiVersion: string;
  kind: string;
  [key: string]: unknown;
}

export function validateObject(object: K8sObject): void {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new model(object as never).validate();
}

/**
 * The flags of an envsync container's args, parsed with the options envsync's own parser uses for
 * `run` (strict: a flag run does not take throws). The args replace the image's CMD, so they
 * start with `run`.
 */
export function runFlagsOf(
  args: readonly string[],
): FlagsOf<typeof SETTINGS & typeof DAEMON_SETTINGS> {
  const [command, ...rest] = args;
  if (command !== 'run')
    throw new Error(`the envsync container's args start with ${command}, not run`);
  const table = { ...SETTINGS, ...GENERAL_SETTINGS, ...DAEMON_SETTINGS };
  return parseArgs({ args: rest, options: flagOptions(table, 'run'), strict: true }).values;
}

/** Every object in a stream of YAML documents (kustomize's output, or a file). */
export function objectsOf(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

/**
 * The YAML files under `dir` that hold Kubernetes objects, as paths relative to it with `/`:
 * every file but the kustomizations, which are kustomize's own.
 */
export function objectFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => /\.ya?ml$/.test(file) && path.posix.basename(file) !== 'kustomization.yaml')
    .sort();
}

/** One operation of a JSON patch (RFC 6902), as a kustomization's `patches` carry them. */
export interface JsonPatchOperation {
  op: string;
  path: string;
  value?: unknown;
}

export interface Kustomization {
  kind: string;
  resources?: string[];
  components?: string[];
  patches?: { target?: { kind?: string; name?: string }; patch?: string; path?: string }[];
}

export function readKustomization(dir: string): Kustomization {
  return parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
}

/** The JSON patch operations of an inline patch (kustomize takes them as YAML or JSON). */
export function patchOperations(patch: string): JsonPatchOperation[] {
  const operations = parse(patch) as unknown;
  if (!Array.isArray(operations))
    throw new Error('the patch is not a list of JSON patch operations');
  return operations as JsonPatchOperation[];
}

/** The path's keys: a JSON pointer (RFC 6901) with its ~1 and ~0 escapes undone. */
function pointer(jsonPointer: string): string[] {
  if (!jsonPointer.startsWith('/')) throw new Error(`"${jsonPointer}" is not a JSON pointer`);
  return jsonPointer
    .slice(1)
    .split('/')
    .map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/**
 * Applies the JSON patch operations kustomizations use here (add, replace, test) to a copy of
 * `document`, as kustomize does; any other operation, or a path that does not resolve, throws.
 */
export function applyJsonPatch<T>(document: T, operations: readonly JsonPatchOperation[]): T {
  const result = structuredClone(document);
  for (const { op, path: where, value } of operations) {
    const keys = pointer(where);
    const last = keys.pop() ?? '';
    let parent: unknown = result;
    for (const key of keys) {
      parent = (parent as Record<string, unknown> | undefined)?.[key];
      if (typeof parent !== 'object' || parent === null)
        throw new Error(`${op} ${where}: no such path`);
    }
    const container = parent as Record<string, unknown>;
    const present = Array.isArray(container)
      ? /^\d+$/.test(last) && Number(last) < container.length
      : Object.hasOwn(container, last);
    if (op === 'test') {
      if (!present || !isDeepStrictEqual(container[last], value))
        throw new Error(`test ${where}: the value is not ${JSON.stringify(value)}`);
    } else if (op === 'replace') {
      if (!present) throw new Error(`replace ${where}: no such path`);
      container[last] = structuredClone(value);
    } else if (op === 'add') {
      if (!Array.isArray(container)) container[last] = structuredClone(value);
      else if (last === '-') container.push(structuredClone(value));
      else if (/^\d+$/.test(last) && Number(last) <= container.length)
        container.splice(Number(last), 0, structuredClone(value));
      else throw new Error(`add ${where}: no such index`);
    } else throw new Error(`${op} ${where}: an operation the examples do not use`);
  }
  return result;
}
