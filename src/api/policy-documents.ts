/** The policy documents endpoints of the production service: `/api/v2/policies/{org}`. */
import { FormData } from 'undici';
import * as z from 'zod';
import type { Mask } from '../core/mask.ts';
import type { ObservedPolicyDocument } from '../core/policy-documents.ts';
import { ApiError } from './errors.ts';
import { excerpt, quoted, type RawResponse } from './response.ts';

/** One upload; without a description, the service keeps the one it has. */
export interface PolicyUpload {
  readonly name: string;
  readonly description?: string | undefined;
  readonly comment: string;
  readonly content: string;
}

/** The form of an upload: a `payload` (JSON, `type` as production's clients say) and the YAML. */
export function policyUploadBody({ name, description, comment, content }: PolicyUpload): FormData {
  const form = new FormData();
  form.append('payload', JSON.stringify({ name, description, type: 'env', comment }));
  form.append('policy_file', new Blob([content], { type: 'application/x-yaml' }), `${name}.yaml`);
  return form;
}

const documents = z.array(
  z.object({
    name: z.string().min(1),
    description: z.string().nullish(),
    versions: z.array(z.object({ version: z.number(), policy_yaml: z.string() })).nullish(),
  }),
);

/** The org's policy documents from the answer to `GET path`, each with its latest version. */
export function readPolicyDocuments(
  path: string,
  { status, text }: RawResponse,
  mask: Mask,
): ObservedPolicyDocument[] {
  const fail = (why: string) =>
    new ApiError('invalid-response', `GET ${path}: the policy documents ${why}`, {
      method: 'GET',
      path,
      status,
    });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(`are not JSON: ${excerpt(text, mask, 120) || '(empty body)'}`);
  }
  const result = documents.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.join('.') || 'the top';
    throw fail(`are malformed: ${issue?.message ?? 'invalid'} at ${where}`);
  }
  const names = new Set<string>();
  return result.data.map(({ name, description, versions }) => {
    if (names.has(name)) throw fail(`show ${quoted(name)} twice`);
    names.add(name);
    const latest = (versions ?? []).toSorted((a, b) => b.version - a.version)[0];
    const shown = latest && { latest: { version: latest.version, content: latest.policy_yaml } };
    return { name, description: description ?? '', ...shown };
  });
}
