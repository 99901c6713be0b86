import { startFakeApi } from './fake-api.ts';

/** A comment as the fake GitHub keeps it. */
export interface FakeComment {
  id: number;
  body: string;
}

/**
 * A fake of the GitHub REST API on real loopback HTTP: issue comments (list, paged with Link headers
 * as GitHub sends them; create; update) and commit statuses (create). It checks the Bearer token,
 * and answers the statuses queued in `failNext` first (GitHub's error body), for errors and retries.
 */
export async function startFakeGitHub({
  token,
  pageSize = 30,
  nextBase,
}: {
  token: string;
  /** Comments per page, whatever per_page asks (GitHub caps it at 100). */
  pageSize?: number;
  /** Where the `next` links point (default: this server), to test a link to another host. */
  nextBase?: string;
}) {
  const comments = new Map<number, FakeComment[]>();
  const failNext: number[] = [];
  const statuses: Record<string, string>[] = [];
  let nextId = 1000;
  const bodies: { method: string; url: string; body: string }[] = [];
  const api = await startFakeApi((req, res) => {
    bodies.push({ method: req.method ?? '', url: req.url ?? '', body: req.body });
    const reply = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    const failure = failNext.shift();
    if (failure !== undefined) {
      reply(failure, {
        message: `fake failure ${failure}`,
        documentation_url: 'https://docs.github.com',
      });
      return;
    }
    if (req.headers.authorization !== `Bearer ${token}`) {
      reply(401, { message: 'Bad credentials' });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const list = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
    const one = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)$/.exec(url.pathname);
    const status = /^\/repos\/([^/]+\/[^/]+)\/statuses\/([0-9a-f]{40})$/.exec(url.pathname);
    if (status !== null && req.method === 'POST') {
      const made = { repo: status[1] ?? '', sha: status[2] ?? '', ...JSON.parse(req.body) };
      if (String(made.description).length > 140) return reply(422, made); // as GitHub
      statuses.push(made as Record<string, string>);
      return reply(201, made);
    }
    const view = (c: FakeComment) => ({
      id: c.id,
      body: c.body,
      html_url: `https://github.example/pr#issuecomment-${c.id}`,
      user: { login: 'github-actions[bot]', type: 'Bot' },
    });
    if (list !== null && req.method === 'GET') {
      const all = comments.get(Number(list[2])) ?? [];
      const page = Number(url.searchParams.get('page') ?? '1');
      const slice = all.slice((page - 1) * pageSize, page * pageSize);
      const pages = Math.max(1, Math.ceil(all.length / pageSize));
      const link = (n: number) =>
        `<${nextBase ?? api.url}${url.pathname}?per_page=${url.searchParams.get('per_page') ?? '30'}&page=${n}>`;
      const links = [
        ...(page < pages ? [`${link(page + 1)}; rel="next"`, `${link(pages)}; rel="last"`] : []),
        ...(page > 1 ? [`${link(1)}; rel="first"`, `${link(page - 1)}; rel="prev"`] : []),
      ];
      reply(200, slice.map(view), links.length === 0 ? {} : { link: links.join(', ') });
      return;
    }
    if (list !== null && req.method === 'POST') {
      const made = { id: nextId++, body: (JSON.parse(req.body) as { body: string }).body };
      const issue = Number(list[2]);
      comments.set(issue, [...(comments.get(issue) ?? []), made]);
      reply(201, view(made));
      return;
    }
    if (one !== null && req.method === 'PATCH') {
      const found = [...comments.values()].flat().find((c) => c.id === Number(one[2]));
      if (found === undefined) {
        reply(404, { message: 'Not Found' });
        return;
      }
      found.body = (JSON.parse(req.body) as { body: string }).body;
      reply(200, view(found));
      return;
    }
    reply(404, { message: 'Not Found' });
  });
  return {
    url: api.url,
    /** Every request: method, url and the Authorization header. */
    requests: api.requests,
    /** Every request with its body. */
    bodies,
    /** The comments of an issue, oldest first. */
    comments: (issue: number) => comments.get(issue) ?? [],
    /** The commit statuses created, oldest first, with their repository and commit. */
    statuses,
    /** Adds comments to an issue (as other people's or an earlier run's). */
    seed(issue: number, texts: readonly string[]) {
      comments.set(issue, [
        ...(comments.get(issue) ?? []),
        ...texts.map((body) => ({ id: nextId++, body })),
      ]);
    },
    failNext,
    close: api.close,
  };
}
