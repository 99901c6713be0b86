/**
 * The `policies` part of a store document: org -> policy documents, each with its versions. Read
 * as loosely as environments are (defaults for what a hand-written seed leaves out), strictly
 * where a typo would hide (unknown fields, wrong types, a name twice, versions out of order).
 */
import { KOSLI_NAME_PATTERN } from './names.ts';
import { CREATED_BY } from './policy-store.ts';
import type { PolicyDocument, PolicyVersion } from './store-types.ts';
import { describe, isRecord } from './validation.ts';

const NAME_PATTERN = KOSLI_NAME_PATTERN;
const DOCUMENT_FIELDS = ['name', 'description', 'created_at', 'versions'];
const VERSION_FIELDS = ['version', 'policy_yaml', 'timestamp', 'created_by'];

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** One version; `number` is its default `version` (its place, from 1). */
function readVersion(
  raw: unknown,
  where: string,
  number: number,
  createdAt: number,
  errors: Map<string, string>,
): PolicyVersion | undefined {
  if (!isRecord(raw)) {
    errors.set(where, `must be an object, got ${describe(raw)}`);
    return undefined;
  }
  const before = errors.size;
  for (const key of Object.keys(raw)) {
    if (!VERSION_FIELDS.includes(key)) errors.set(`${where}.${key}`, 'unknown field');
  }
  const get = (key: string, fallback: unknown): unknown =>
    Object.hasOwn(raw, key) ? raw[key] : fallback;
  const version = get('version', number);
  if (!Number.isSafeInteger(version) || typeof version !== 'number' || version < 1) {
    errors.set(`${where}.version`, 'must be a whole number from 1');
  }
  const yaml = get('policy_yaml', undefined);
  if (typeof yaml !== 'string') errors.set(`${where}.policy_yaml`, 'must be a string');
  const timestamp = get('timestamp', createdAt);
  if (!isTime(timestamp)) errors.set(`${where}.timestamp`, 'must be a number (epoch seconds)');
  const createdBy = get('created_by', CREATED_BY);
  if (typeof createdBy !== 'string') errors.set(`${where}.created_by`, 'must be a string');
  if (
    errors.size > before ||
    typeof version !== 'number' ||
    typeof yaml !== 'string' ||
    !isTime(timestamp) ||
    typeof createdBy !== 'string'
  ) {
    return undefined;
  }
  return { version, policy_yaml: yaml, timestamp, created_by: createdBy };
}

function readDocument(
  raw: unknown,
  where: string,
  nowSeconds: number,
  errors: Map<string, string>,
): PolicyDocument | undefined {
  if (!isRecord(raw)) {
    errors.set(where, `must be an object, got ${describe(raw)}`);
    return undefined;
  }
  const before = errors.size;
  for (const key of Object.keys(raw)) {
    if (!DOCUMENT_FIELDS.includes(key)) errors.set(`${where}.${key}`, 'unknown field');
  }
  const name = raw.name;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    errors.set(`${where}.name`, `must be a string matching ${NAME_PATTERN.source}`);
  }
  const description = Object.hasOwn(raw, 'description') ? raw.description : '';
  if (typeof description !== 'string') errors.set(`${where}.description`, 'must be a string');
  const createdAt = Object.hasOwn(raw, 'created_at') ? raw.created_at : nowSeconds;
  if (!isTime(createdAt)) errors.set(`${where}.created_at`, 'must be a number (epoch seconds)');
  const rawVersions = raw.versions;
  const versions: PolicyVersion[] = [];
  if (!Array.isArray(rawVersions) || rawVersions.length === 0) {
    errors.set(`${where}.versions`, 'must be a non-empty array of versions');
  } else {
    rawVersions.forEach((item: unknown, index) => {
      const at = `${where}.versions[${index}]`;
      const version = readVersion(item, at, index + 1, isTime(createdAt) ? createdAt : 0, errors);
      if (version === undefined) return;
      const previous = versions.at(-1);
      if (previous !== undefined && version.version <= previous.version) {
        errors.set(`${at}.version`, `must be greater than the one before (${previous.version})`);
      }
      versions.push(version);
    });
  }
  if (
    errors.size > before ||
    typeof name !== 'string' ||
    typeof description !== 'string' ||
    !isTime(createdAt)
  ) {
    return undefined;
  }
  return { name, description, created_at: createdAt, versions };
}

/** Reads `policies` (an object of org -> documents) into `errors`, or the documents by org. */
export function readPolicyDocuments(
  raw: unknown,
  nowSeconds: number,
  errors: Map<string, string>,
): Map<string, PolicyDocument[]> {
  const orgs = new Map<string, PolicyDocument[]>();
  if (!isRecord(raw)) {
    errors.set('policies', 'must be an object of org name -> array of policy documents');
    return orgs;
  }
  for (const [org, list] of Object.entries(raw)) {
    const where = `policies.${org}`;
    if (!NAME_PATTERN.test(org)) {
      errors.set(where, `org name must match ${NAME_PATTERN.source}`);
      continue;
    }
    if (!Array.isArray(list)) {
      errors.set(where, 'must be an array of policy documents');
      continue;
    }
    const documents: PolicyDocument[] = [];
    list.forEach((item: unknown, index) => {
      const document = readDocument(item, `${where}[${index}]`, nowSeconds, errors);
      if (document === undefined) return;
      if (documents.some((other) => other.name === document.name)) {
        errors.set(`${where}[${index}].name`, `a policy '${document.name}' is listed twice`);
      }
      documents.push(document);
    });
    orgs.set(org, documents);
  }
  return orgs;
}
