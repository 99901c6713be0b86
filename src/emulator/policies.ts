/**
 * Policy documents (kosli profile; docs/api-behaviour.md#policies): `GET /api/v2/policies/{org}`,
 * `GET /api/v2/policies/{org}/{name}` and `PUT /api/v2/policies/{org}` (multipart upload).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { decodeSegment, sendError, sendJson } from './http.ts';
import { namePatternFor } from './names.ts';
import { isMultipartContentType, parseMultipart, validatePolicyForm } from './policy-form.ts';
import { readBounded, sendInvalid } from './request-body.ts';
import { shownSegment } from './request-tokens.ts';

/** GET every policy document of the org, sorted by name. */
export function listPolicies(res: ServerResponse, org: string, deps: ApiDeps): void {
  sendJson(res, 200, deps.store.policies.list(org));
}

/** GET one policy document, or 404. */
export function readPolicy(res: ServerResponse, org: string, rawName: string, deps: ApiDeps): void {
  const name = decodeSegment(rawName) ?? rawName;
  const document = namePatternFor(deps.profile).test(name)
    ? deps.store.policies.get(org, name)
    : undefined;
  if (document === undefined) {
    const shown = shownSegment(name, res, deps.tokens);
    sendError(res, 404, `Policy named '${shown}' does not exist for organization '${org}'`);
    return;
  }
  sendJson(res, 200, document);
}

/**
 * PUT a policy document: 201 when it is created, 200 when it existed (whether or not the upload
 * changed it); the body is the document as now held.
 */
export async function putPolicy(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  deps: ApiDeps,
): Promise<void> {
  const contentType = req.headers['content-type'];
  if (contentType === undefined || !isMultipartContentType(contentType)) {
    sendError(res, 415, 'Content-Type must be multipart/form-data');
    return;
  }
  const body = await readBounded(req, res);
  if (body === undefined) return;
  const parsed = await parseMultipart(body, contentType);
  if (!parsed.ok) {
    sendInvalid(res, { payload: parsed.reason });
    return;
  }
  const upload = await validatePolicyForm(parsed.form, namePatternFor(deps.profile));
  if (!upload.ok) {
    sendInvalid(res, upload.errors);
    return;
  }
  const outcome = deps.store.policies.save(org, upload.value, deps.nowSeconds());
  sendJson(res, outcome === 'created' ? 201 : 200, deps.store.policies.get(org, upload.value.name));
}
