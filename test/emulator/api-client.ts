/** What the emulator's API tests share: a client over real HTTP (one org, one token), and data. */
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { Sleep } from '../../src/emulator/index.ts';
import type { EmulatorOptions, JsonResponse } from '../helpers/emulator.ts';
import type { SendOptions, TestEmulator } from '../helpers/emulator.ts';

export const TOKEN = 'dialect-token';
export const NOW_MS = 1_700_000_000_000;
export const VALID = { name: 'prod', description: 'Production', type: 'K8S' };
export const VALIDATION_FAILED = 'Input payload validation failed';
export const RULE =
  'must start with a letter or number, and only contain letters, numbers, `.`, `-` and `_`';

/** A message matcher: a string is the whole text. */
export const exactly = (text: string | RegExp): RegExp =>
  typeof text === 'string' ? new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : text;

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
  const chunks = parts.flatMap((part) => {
    const file = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.filename === undefined ? '' : 'Content-Type: application/x-yaml\r\n';
    const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${file}\r\n`;
    return [Buffer.from(`${head}${type}\r\n`), Buffer.from(part.value), Buffer.from('\r\n')];
  });
  const body = Buffer.concat([...chunks, Buffer.from(`--${BOUNDARY}--\r\n`)]);
  return { contentType: `multipart/form-data; boundary=${BOUNDARY}`, body };
}

/** The usual policy upload: a `payload` field and a `policy_file` file part. */
export function policyForm(payload: unknown, yaml: string | Buffer, extra: FormPart[] = []) {
  return multipart([
    { name: 'payload', value: JSON.stringify(payload) },
    { name: 'policy_file', value: yaml, filename: 'policy.yaml' },
    ...extra,
  ]);
}

export type ApiClient = ReturnType<typeof apiClient>;

/** Requests with the token, to org `acme` unless told. */
export function apiClient(emu: TestEmulator, defaultOrg = 'acme') {
  const call = (path: string, options: SendOptions = {}): Promise<JsonResponse> =>
    send(`${emu.url}${path}`, {
      ...options,
      headers: { authorization: `Bearer ${TOKEN}`, ...options.headers },
      dispatcher: emu.agent,
    });
  const base = (org: string): string => `/api/v2/environments/${org}`;
  return {
    call,
    put: (json: unknown, org = defaultOrg) => call(base(org), { method: 'PUT', json }),
    list: (query?: string, org = defaultOrg) =>
      call(query === undefined ? base(org) : `${base(org)}?${query}`),
    read: (name: string, org = defaultOrg) => call(`${base(org)}/${name}`),
    patch: (name: string, json: unknown) =>
      call(`${base(defaultOrg)}/${name}`, { method: 'PATCH', json }),
    archive: (name: string, org = defaultOrg) =>
      call(`${base(org)}/${name}/archive`, { method: 'PUT' }),
    rename: (name: string, json: unknown) =>
      call(`${base(defaultOrg)}/${name}/rename`, { method: 'PUT', json }),
    /** POST attaches, DELETE detaches. */
    policies: (method: 'POST' | 'DELETE', name: string, json: unknown) =>
      call(`${base(defaultOrg)}/${name}/policies`, { method, json }),
    tags: (name: string, json: unknown) =>
      call(`/api/v2/tags/${defaultOrg}/environment/${name}`, { method: 'PATCH', json }),
    putPolicy: (form: MultipartBody, org = defaultOrg) =>
      call(`/api/v2/policies/${org}`, {
        method: 'PUT',
        headers: { 'content-type': form.contentType },
        body: form.body,
      }),
    /** The documents of the org, or the one named. */
    getPolicies: (name?: string) =>
      call(`/api/v2/policies/${defaultOrg}${name === undefined ? '' : `/${name}`}`),
  };
}

/** A kosli-profile emulator with orgs acme and beta, the token TOKEN, and the clock `now`. */
export async function startKosli(now: () => number, options: EmulatorOptions = {}) {
  const emu = await startTestEmulator({
    profile: 'kosli',
    orgs: ['acme', 'beta'],
    tokens: [{ token: TOKEN, orgs: null }],
    now,
    ...options,
  });
  return { emu, api: apiClient(emu) };
}

/** A sleep the test controls: each wait lasts until the test releases it. */
export function heldSleep() {
  const waits: { ms: number; release: () => void }[] = [];
  const sleep: Sleep = (ms) =>
    new Promise((resolve) => waits.push({ ms, release: () => resolve() }));
  /** The next wait `emu` begins (polling its admin API, never a clock). */
  const next = async (emu: TestEmulator) => {
    for (let i = 0; i < 1000 && waits.length === 0; i += 1) await emu.getStats();
    const wait = waits.shift();
    if (wait === undefined) throw new Error('the emulator began no wait');
    return wait;
  };
  return { sleep, next, waits };
}

/** The `errors` object of a 400 body, or undefined. */
export function errorsOf({ body }: JsonResponse): Record<string, unknown> | undefined {
  const errors =
    typeof body === 'object' && body !== null ? Reflect.get(body, 'errors') : undefined;
  return typeof errors === 'object' && errors !== null ? { ...errors } : undefined;
}

/** The entries of a listing: a bare array, an envelope's `environments`, or the contract's `env`. */
export function entriesOf({ body }: JsonResponse): Record<string, unknown>[] {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const list: unknown = Array.isArray(body) ? body : (record['environments'] ?? record['env']);
  const isEntry = (entry: unknown): entry is Record<string, unknown> =>
    typeof entry === 'object' && entry !== null;
  return Array.isArray(list) ? list.filter(isEntry) : [];
}
