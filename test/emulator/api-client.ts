/** A small API client over real HTTP for the emulator's profile tests: one org, one token. */
import { send } from '../helpers/emulator.ts';
import type { JsonResponse, SendOptions, TestEmulator } from '../helpers/emulator.ts';

export const TOKEN = 'dialect-token';

export interface ApiClient {
  /** Any request with the token. */
  call(path: string, options?: SendOptions): Promise<JsonResponse>;
  /** PUT /api/v2/environments/{org} with `json` as the body. */
  put(json: unknown, org?: string): Promise<JsonResponse>;
  /** GET /api/v2/environments/{org}, optionally with a query such as "page=1". */
  list(query?: string, org?: string): Promise<JsonResponse>;
  /** GET /api/v2/environments/{org}/{name}. */
  read(name: string, org?: string): Promise<JsonResponse>;
  /** PATCH /api/v2/environments/{org}/{name} with `json` as the body. */
  patch(name: string, json: unknown, org?: string): Promise<JsonResponse>;
  /** PUT /api/v2/environments/{org}/{name}/archive without a body. */
  archive(name: string, org?: string): Promise<JsonResponse>;
  /** PUT /api/v2/environments/{org}/{name}/rename with `json` as the body. */
  rename(name: string, json: unknown, org?: string): Promise<JsonResponse>;
  /** POST (attach) or DELETE (detach) /api/v2/environments/{org}/{name}/policies. */
  policies(
    method: 'POST' | 'DELETE',
    name: string,
    json: unknown,
    org?: string,
  ): Promise<JsonResponse>;
  /** PATCH /api/v2/tags/{org}/environment/{name} with `json` as the body. */
  tags(name: string, json: unknown, org?: string): Promise<JsonResponse>;
  /** PUT /api/v2/policies/{org} with a multipart body (see `multipart`). */
  putPolicy(form: MultipartBody, org?: string): Promise<JsonResponse>;
  /** GET /api/v2/policies/{org}, or /api/v2/policies/{org}/{name} when a name is given. */
  getPolicies(name?: string, org?: string): Promise<JsonResponse>;
}

/** One part of a multipart/form-data body: a plain field, or a file when `filename` is given. */
export interface FormPart {
  readonly name: string;
  readonly value: string | Buffer;
  readonly filename?: string;
}

export interface MultipartBody {
  readonly contentType: string;
  readonly body: Buffer;
}

const BOUNDARY = 'envsync-test-boundary-7f3a';

/** Encodes `parts` as multipart/form-data, written out by hand so tests control every byte. */
export function multipart(parts: readonly FormPart[]): MultipartBody {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.filename === undefined ? '' : 'Content-Type: application/x-yaml\r\n';
    chunks.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${filename}\r\n${type}\r\n`,
      ),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return {
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body: Buffer.concat(chunks),
  };
}

/** The usual policy upload: a `payload` field and a `policy_file` file part. */
export function policyForm(
  payload: Record<string, unknown>,
  yaml: string | Buffer,
  extra: readonly FormPart[] = [],
): MultipartBody {
  return multipart([
    { name: 'payload', value: JSON.stringify(payload) },
    { name: 'policy_file', value: yaml, filename: 'policy.yaml' },
    ...extra,
  ]);
}

export function apiClient(emu: TestEmulator, defaultOrg = 'acme'): ApiClient {
  const call = (path: string, options: SendOptions = {}): Promise<JsonResponse> =>
    send(`${emu.url}${path}`, {
      ...options,
      headers: { authorization: `Bearer ${TOKEN}`, ...options.headers },
      dispatcher: emu.agent,
    });
  const base = (org: string): string => `/api/v2/environments/${org}`;
  return {
    call,
    put: (json, org = defaultOrg) => call(base(org), { method: 'PUT', json }),
    list: (query, org = defaultOrg) =>
      call(query === undefined ? base(org) : `${base(org)}?${query}`),
    read: (name, org = defaultOrg) => call(`${base(org)}/${name}`),
    patch: (name, json, org = defaultOrg) =>
      call(`${base(org)}/${name}`, { method: 'PATCH', json }),
    archive: (name, org = defaultOrg) => call(`${base(org)}/${name}/archive`, { method: 'PUT' }),
    rename: (name, json, org = defaultOrg) =>
      call(`${base(org)}/${name}/rename`, { method: 'PUT', json }),
    policies: (method, name, json, org = defaultOrg) =>
      call(`${base(org)}/${name}/policies`, { method, json }),
    tags: (name, json, org = defaultOrg) =>
      call(`/api/v2/tags/${org}/environment/${name}`, { method: 'PATCH', json }),
    putPolicy: (form, org = defaultOrg) =>
      call(`/api/v2/policies/${org}`, {
        method: 'PUT',
        headers: { 'content-type': form.contentType },
        body: form.body,
      }),
    getPolicies: (name, org = defaultOrg) =>
      call(name === undefined ? `/api/v2/policies/${org}` : `/api/v2/policies/${org}/${name}`),
  };
}

/** The `errors` object of a 400 body, or undefined. */
export function errorsOf(response: JsonResponse): Record<string, unknown> | undefined {
  const { body } = response;
  if (typeof body !== 'object' || body === null || !('errors' in body)) return undefined;
  const { errors } = body;
  return typeof errors === 'object' && errors !== null ? { ...errors } : undefined;
}

/** The entries of a listing: a bare array, an envelope's `environments`, or the contract's `env`. */
export function entriesOf(response: JsonResponse): Record<string, unknown>[] {
  const { body } = response;
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const list = Array.isArray(body) ? body : (record['environments'] ?? record['env']);
  if (!Array.isArray(list)) return [];
  return list.filter(
    (entry: unknown): entry is Record<string, unknown> =>
      typeof entry === 'object' && entry !== null,
  );
}
