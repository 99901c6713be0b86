/**
 * The policy documents endpoints of the production service (`kosli` dialect): reading
 * `GET /api/v2/policies/{org}`, and the `multipart/form-data` body of `PUT /api/v2/policies/{org}`.
 *
 * undici's dispatchers take only a `FormData` of undici's own (the platform's is refused, and
 * undici's would load its fetch stack: docs/architecture.md, "Start-up rules"), so the body is
 * written here, whole, with a random boundary: a buffer of known length that a retry sends again.
 */
import type { ObservedPolicyDocument } from '../core/policy-documents.ts';
import type { Mask } from '../core/mask.ts';
import * as crypto from 'node:crypto';
import { ApiError } from './errors.ts';
import { excerpt, quoted, type RawResponse } from './response.ts';

/** A request body and its media type. */
export interface RequestBody {
  readonly bytes: string | Buffer;
  readonly contentType: string;
}

/** One upload: the payload's fields and the policy's YAML. */
export interface PolicyUpload {
  readonly name: string;
  /** Left out of the payload when undefined: the service keeps the description it has. */
  readonly description?: string | undefined;
  readonly comment: string;
  readonly content: string;
}

/** The type production's clients give an environment policy. */
const POLICY_TYPE = 'env';

/**
 * The multipart body of an upload: a `payload` field (JSON `{name, description, type, comment}`)
 * and a `policy_file` file part holding the YAML. The payload is JSON (no raw line break in it);
 * the policy name (the name rule: letters, digits, `._~-`) is the part's file name.
 */
export function policyUploadBody(upload: PolicyUpload, random = randomBoundary): RequestBody {
  const payload = JSON.stringify({
    name: upload.name,
    ...(upload.description === undefined ? {} : { description: upload.description }),
    type: POLICY_TYPE,
    comment: upload.comment,
  });
  const content = Buffer.from(upload.content, 'utf8');
  let boundary = random();
  // A boundary must not occur in what it separates (128 random bits: never in practice).
  while (payload.includes(boundary) || content.includes(boundary)) boundary = random();
  const head =
    `--${boundary}\r\n` +
    'Content-Disposition: form-data; name="payload"\r\n\r\n' +
    `${payload}\r\n` +
    `--${boundary}\r\n` +
    `Content-Disposition: form-data; name="policy_file"; filename="${upload.name}.yaml"\r\n` +
    'Content-Type: application/x-yaml\r\n\r\n';
  const tail = `\r\n--${boundary}--\r\n`;
  return {
    bytes: Buffer.concat([Buffer.from(head, 'utf8'), content, Buffer.from(tail, 'utf8')]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function randomBoundary(): string {
  return `envsync-${crypto.randomBytes(16).toString('hex')}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One entry of the list, or why it cannot be read. */
function readDocument(entry: unknown, index: number): ObservedPolicyDocument | string {
  if (!isRecord(entry)) return `entry ${index} is not an object`;
  const { name, description, versions } = entry;
  if (typeof name !== 'string' || name === '') return `entry ${index} has no name`;
  if (description !== undefined && description !== null && typeof description !== 'string')
    return `policy ${quoted(name)}: its description is not a string`;
  if (versions !== undefined && versions !== null && !Array.isArray(versions))
    return `policy ${quoted(name)}: its versions are not a list`;
  let latest: ObservedPolicyDocument['latest'];
  for (const version of (versions ?? []) as unknown[]) {
    if (!isRecord(version)) return `policy ${quoted(name)}: a version is not an object`;
    const number = version.version;
    const content = version.policy_yaml;
    if (typeof number !== 'number' || !Number.isFinite(number) || typeof content !== 'string')
      return `policy ${quoted(name)}: a version has no number or no policy_yaml`;
    if (latest === undefined || number > latest.version) latest = { version: number, content };
  }
  return {
    name,
    description: typeof description === 'string' ? description : '',
    ...(latest === undefined ? {} : { latest }),
  };
}

/** The org's policy documents from the answer to `GET path`, checked; throws an ApiError. */
export function readPolicyDocuments(
  path: string,
  response: RawResponse,
  mask: Mask,
): ObservedPolicyDocument[] {
  const fail = (why: string) =>
    new ApiError('invalid-response', `GET ${path}: the policy documents ${why}`, {
      method: 'GET',
      path,
      status: response.status,
    });
  let json: unknown;
  try {
    json = JSON.parse(response.text);
  } catch {
    throw fail(`are not JSON: ${excerpt(response.text, mask, 120) || '(empty body)'}`);
  }
  if (!Array.isArray(json)) throw fail('are not a list');
  const documents: ObservedPolicyDocument[] = [];
  const names = new Set<string>();
  for (const [index, entry] of json.entries()) {
    const read = readDocument(entry, index);
    if (typeof read === 'string') throw fail(`cannot be read: ${read}`);
    if (names.has(read.name)) throw fail(`show ${quoted(read.name)} twice`);
    names.add(read.name);
    documents.push(read);
  }
  return documents;
}
