/**
 * The few GitHub REST calls the action makes: list a pull request's comments (every page), create
 * one, update one. The address comes from GITHUB_API_URL, so a test points it at a fake GitHub on
 * loopback. The token is sent only to that address (a `next` page elsewhere is refused) and never
 * appears in a message.
 */
import { isOwnComment } from './comment-body.ts';

export interface GitHubApi {
  /** GITHUB_API_URL, e.g. https://api.github.com (GitHub Enterprise: https://HOST/api/v3). */
  readonly baseUrl: string;
  readonly token: string;
  /** Per request (default 30 s). */
  readonly timeoutMs?: number;
  /** Before each retry of a 5xx or a network failure (default 1 s; two retries). */
  readonly retryDelayMs?: number;
}

/** A GitHub call that failed: what was asked, the answer, and what to do. Never the token. */
export class GitHubApiError extends Error {
  override name = 'GitHubApiError';
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  constructor(method: string, path: string, status: number | undefined, message: string) {
    super(message);
    this.method = method;
    this.path = path;
    this.status = status;
  }
}

/** What to do about a refused call, by status. */
function advice(status: number): string {
  switch (status) {
    case 401:
      return "the token was refused: pass a valid token as the github-token input (the default is the workflow's own GITHUB_TOKEN)";
    case 403:
      return 'the token may not write comments: give the job "permissions: pull-requests: write" (the token of a pull request from a fork is always read-only)';
    case 404:
      return "no such repository or pull request, or the token cannot see it: check GITHUB_REPOSITORY and the token's repository access";
    case 422:
      return "GitHub refused the comment's content";
    default:
      return 'GitHub did not take the request; re-run the job';
  }
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly link: string | null;
}

/** One request, with two retries on a network failure or a 5xx. */
async function call(
  api: GitHubApi,
  method: 'GET' | 'POST' | 'PATCH',
  url: URL,
  body?: unknown,
): Promise<Answer> {
  const scrub = (text: string) => (api.token === '' ? text : text.split(api.token).join('***'));
  const where = `${method} ${url.pathname}${url.search}`;
  for (let attempt = 0; ; attempt++) {
    let failure: string;
    try {
      const response = await fetch(url, {
        method,
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${api.token}`,
          'x-github-api-version': '2022-11-28',
          'user-agent': 'envsync-action',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: 'error',
        signal: AbortSignal.timeout(api.timeoutMs ?? 30_000),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (response.ok)
        return { status: response.status, body: parsed, link: response.headers.get('link') };
      const said =
        typeof parsed === 'object' && parsed !== null && 'message' in parsed
          ? String(parsed.message)
          : text.slice(0, 200);
      failure = `${where}: HTTP ${response.status} ${JSON.stringify(scrub(said))}: ${advice(response.status)}`;
      if (response.status < 500 || attempt >= 2)
        throw new GitHubApiError(method, url.pathname, response.status, failure);
    } catch (error) {
      if (error instanceof GitHubApiError) throw error;
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
      failure = `${where}: no answer from ${url.origin} (${scrub(reason)}); check GITHUB_API_URL and the network`;
      if (attempt >= 2) throw new GitHubApiError(method, url.pathname, undefined, failure);
    }
    await new Promise((resolve) => setTimeout(resolve, api.retryDelayMs ?? 1000));
  }
}

/** The `next` page of a Link header, if any. */
export function nextPage(link: string | null): string | undefined {
  for (const part of (link ?? '').split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

function endpoint(api: GitHubApi, path: string): URL {
  return new URL(`${api.baseUrl.replace(/\/+$/, '')}${path}`);
}

export interface Comment {
  readonly id: number;
  readonly url: string;
}

function asComments(
  body: unknown,
  where: string,
): { id: number; body: string | null; html_url: string }[] {
  if (!Array.isArray(body))
    throw new GitHubApiError(
      'GET',
      where,
      200,
      `GET ${where}: the answer is not a list of comments`,
    );
  return body as { id: number; body: string | null; html_url: string }[];
}

/** The first comment of the pull request (issue) that starts with `marker`, across every page. */
export async function findComment(
  api: GitHubApi,
  repository: string,
  issue: number,
  marker: string,
): Promise<Comment | undefined> {
  const first = endpoint(api, `/repos/${repository}/issues/${issue}/comments?per_page=100`);
  let url: URL | undefined = first;
  for (let page = 1; url !== undefined; page++) {
    if (page > 1000)
      throw new GitHubApiError(
        'GET',
        first.pathname,
        undefined,
        `GET ${first.pathname}: more than 1000 pages of comments; giving up`,
      );
    const answer = await call(api, 'GET', url);
    const found = asComments(answer.body, url.pathname).find((c) => isOwnComment(c.body, marker));
    if (found !== undefined) return { id: found.id, url: found.html_url };
    const next = nextPage(answer.link);
    if (next === undefined) break;
    const nextUrl = new URL(next, url);
    // The token goes only where GITHUB_API_URL points.
    if (nextUrl.origin !== first.origin)
      throw new GitHubApiError(
        'GET',
        first.pathname,
        answer.status,
        `GET ${first.pathname}: the next page is on another host (${nextUrl.origin}); refusing to send the token there`,
      );
    url = nextUrl;
  }
  return undefined;
}

/** Creates the comment, or updates the one that carries `marker`. */
export async function upsertComment(
  api: GitHubApi,
  repository: string,
  issue: number,
  marker: string,
  body: string,
): Promise<Comment & { readonly action: 'created' | 'updated' }> {
  if (!/^[^/\s]+\/[^/\s]+$/.test(repository))
    throw new Error(`GITHUB_REPOSITORY ${JSON.stringify(repository)} is not OWNER/NAME`);
  const existing = await findComment(api, repository, issue, marker);
  const answer =
    existing === undefined
      ? await call(api, 'POST', endpoint(api, `/repos/${repository}/issues/${issue}/comments`), {
          body,
        })
      : await call(
          api,
          'PATCH',
          endpoint(api, `/repos/${repository}/issues/comments/${existing.id}`),
          { body },
        );
  const made = answer.body as { id?: unknown; html_url?: unknown } | undefined;
  return {
    action: existing === undefined ? 'created' : 'updated',
    id: typeof made?.id === 'number' ? made.id : (existing?.id ?? 0),
    url: typeof made?.html_url === 'string' ? made.html_url : (existing?.url ?? ''),
  };
}
