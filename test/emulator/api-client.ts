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
  /** PUT /api/v2/environments/{org}/{name}/archive without a body. */
  archive(name: string, org?: string): Promise<JsonResponse>;
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
    archive: (name, org = defaultOrg) => call(`${base(org)}/${name}/archive`, { method: 'PUT' }),
  };
}

/** The `errors` object of a 400 body, or undefined. */
export function errorsOf(response: JsonResponse): Record<string, unknown> | undefined {
  const { body } = response;
  if (typeof body !== 'object' || body === null || !('errors' in body)) return undefined;
  const { errors } = body;
  return typeof errors === 'object' && errors !== null ? { ...errors } : undefined;
}

/** The entries of a bare-array listing (or an envelope's `environments`) as records. */
export function entriesOf(response: JsonResponse): Record<string, unknown>[] {
  const { body } = response;
  const list =
    typeof body === 'object' && body !== null && 'environments' in body ? body.environments : body;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (entry: unknown): entry is Record<string, unknown> =>
      typeof entry === 'object' && entry !== null,
  );
}
