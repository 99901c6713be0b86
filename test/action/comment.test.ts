/** The action's pull request comment: its body, and its writing through a fake GitHub. */
import { afterEach, describe, expect, it } from 'vitest';
import * as commentBodies from '../../scripts/action/comment-body.ts';
import { GitHubApiError, nextPage, upsertComment } from '../../scripts/action/github.ts';
import { startFakeGitHub } from '../helpers/fake-github.ts';

const { GITHUB_COMMENT_LIMIT, commentBody, commentMarker, cutMarkdown } = commentBodies;

const TOKEN = 'ghs_fakeGitHubToken0123456789';
const REPO = 'acme/infra';
const MARKER = commentMarker('plan');
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

async function fakeGitHub(options: Partial<Parameters<typeof startFakeGitHub>[0]> = {}) {
  const github = await startFakeGitHub({ token: TOKEN, ...options });
  open.push(github);
  return github;
}

const api = (url: string) => ({ baseUrl: url, token: TOKEN, retryDelayMs: 10 });

describe('writing the plan comment through the GitHub REST API', () => {
  it('creates the comment when no comment carries the marker', async () => {
    const github = await fakeGitHub();
    github.seed(7, ['LGTM', `quoting it: ${MARKER} is not at the start`]);
    const made = await upsertComment(api(github.url), REPO, 7, MARKER, `${MARKER}\nplan one`);
    expect(made.action).toBe('created');
    expect(github.comments(7).map((c) => c.body)).toEqual([
      'LGTM',
      `quoting it: ${MARKER} is not at the start`,
      `${MARKER}\nplan one`,
    ]);
    expect(made.url).toBe(`https://github.example/pr#issuecomment-${made.id}`);
    expect(github.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('updates the one comment with the marker, found on a later page, and creates no other', async () => {
    const github = await fakeGitHub({ pageSize: 2 });
    github.seed(7, ['a', 'b', 'c', 'd', `${MARKER}\nold plan`, 'e', 'f']);
    const made = await upsertComment(api(github.url), REPO, 7, MARKER, `${MARKER}\nnew plan`);
    expect(made.action).toBe('updated');
    const bodies = github.comments(7).map((c) => c.body);
    expect(bodies).toEqual(['a', 'b', 'c', 'd', `${MARKER}\nnew plan`, 'e', 'f']);
    // Pages 1, 2 and 3 were read, then one PATCH; nothing was posted.
    expect(github.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET', 'PATCH']);
    expect(github.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('page'))).toEqual(
      [null, '2', '3', null],
    );
  });

  it('reads every page before creating: the marker is on no page', async () => {
    const github = await fakeGitHub({ pageSize: 2 });
    github.seed(7, ['a', 'b', 'c', 'd', 'e']);
    const made = await upsertComment(api(github.url), REPO, 7, MARKER, `${MARKER}\nplan`);
    expect(made.action).toBe('created');
    expect(github.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET', 'POST']);
  });

  it('keeps one comment per comment id: another id gets a comment of its own', async () => {
    const github = await fakeGitHub();
    await upsertComment(api(github.url), REPO, 7, MARKER, `${MARKER}\nfirst`);
    await upsertComment(api(github.url), REPO, 7, MARKER, `${MARKER}\nsecond`);
    const other = commentMarker('staging');
    await upsertComment(api(github.url), REPO, 7, other, `${other}\nstaging plan`);
    const bodies = github.comments(7).map((c) => c.body);
    expect(bodies).toEqual([`${MARKER}\nsecond`, `${other}\nstaging plan`]);
  });

  it('a refused write says what to do, with the status, and never the token', async () => {
    const github = await fakeGitHub();
    github.failNext.push(403);
    const error = await upsertComment(api(github.url), REPO, 7, MARKER, 'x').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitHubApiError);
    const message = (error as GitHubApiError).message;
    expect((error as GitHubApiError).status).toBe(403);
    expect(message).toContain('GET /repos/acme/infra/issues/7/comments');
    expect(message).toContain('HTTP 403');
    expect(message).toContain('permissions: pull-requests: write');
    expect(message).not.toContain(TOKEN);
  });

  it('a refused token is reported as such', async () => {
    const github = await fakeGitHub();
    const wrong = { ...api(github.url), token: 'wrong-token-abc' };
    const error = await upsertComment(wrong, REPO, 7, MARKER, 'x').catch((e: unknown) => e);
    expect((error as GitHubApiError).status).toBe(401);
    expect((error as Error).message).toMatch(/Bad credentials.*the token was refused/);
    expect((error as Error).message).not.toContain('wrong-token-abc');
  });

  it('retries a 502 and then succeeds', async () => {
    const github = await fakeGitHub();
    github.failNext.push(502, 503);
    const made = await upsertComment(api(github.url), REPO, 7, MARKER, `${MARKER}\nplan`);
    expect(made.action).toBe('created');
    expect(github.comments(7)).toHaveLength(1);
  });

  it('gives up after three 5xx answers, naming the request', async () => {
    const github = await fakeGitHub();
    github.failNext.push(500, 500, 500);
    await expect(upsertComment(api(github.url), REPO, 7, MARKER, 'x')).rejects.toThrow(
      /GET \/repos\/acme\/infra\/issues\/7\/comments\?per_page=100: HTTP 500/,
    );
    expect(github.comments(7)).toEqual([]);
  });

  it('no answer at all is reported with the address to check', async () => {
    const github = await fakeGitHub();
    const url = github.url;
    await github.close();
    await expect(upsertComment(api(url), REPO, 7, MARKER, 'x')).rejects.toThrow(
      /no answer from http:\/\/127\.0\.0\.1:\d+ .*check GITHUB_API_URL/,
    );
  });

  it('never sends the token to a next page on another host', async () => {
    const elsewhere = await fakeGitHub();
    const github = await fakeGitHub({ pageSize: 1, nextBase: elsewhere.url });
    github.seed(7, ['a', 'b']);
    await expect(upsertComment(api(github.url), REPO, 7, MARKER, 'x')).rejects.toThrow(
      /next page is on another host .*refusing to send the token/,
    );
    expect(elsewhere.requests).toEqual([]);
  });

  it('works under a GitHub Enterprise base path (GITHUB_API_URL with /api/v3)', async () => {
    const github = await fakeGitHub();
    await expect(upsertComment(api(`${github.url}/api/v3/`), REPO, 7, MARKER, 'x')).rejects.toThrow(
      /GET \/api\/v3\/repos\/acme\/infra\/issues\/7\/comments.*HTTP 404/,
    );
  });

  it('reads the next link of a Link header', () => {
    const page = (n: number) => `https://api.github.com/x?page=${n}`;
    expect(nextPage(`<${page(2)}>; rel="next", <${page(5)}>; rel="last"`)).toBe(page(2));
    expect(nextPage('<https://api.github.com/x?page=1>; rel="first"')).toBeUndefined();
    expect(nextPage(null)).toBeUndefined();
  });
});

describe('the comment body', () => {
  const facts = {
    marker: MARKER,
    command: 'plan',
    exitCode: 2,
    runUrl: 'https://github.com/acme/infra/actions/runs/42',
    sha: '0123456789abcdef0123456789abcdef01234567',
  };

  it('starts with the marker, keeps the report byte for byte, and links to the run', () => {
    const report =
      '### envsync plan\n\n| org | x |\n| --- | --- |\n| a\\|b | <code>&lt;b&gt;</code> |\n';
    const body = commentBody({ ...facts, report });
    expect(body.startsWith(`${MARKER}\n${report.trimEnd()}\n`)).toBe(true);
    expect(body).toContain('[the workflow run](https://github.com/acme/infra/actions/runs/42)');
    expect(body).toContain('`0123456789ab`');
  });

  it('says the command failed when envsync produced no report', () => {
    const body = commentBody({ ...facts, report: '', exitCode: 1 });
    expect(body).toContain('### envsync plan failed');
    expect(body).toContain('exited with code 1 before it produced a report');
  });

  it('a report too long for GitHub is cut at a line, its open block closed, with a note and the link', () => {
    const rows = Array.from(
      { length: 3000 },
      (_, i) => `| ➕ create | env-${i} | description: <code>"${'é'.repeat(20)}"</code> |`,
    );
    const report = [
      '### envsync plan',
      '',
      '<details open><summary><b>acme</b>: 3000 changes</summary>',
      '',
      '| action | environment | fields |',
      '| --- | --- | --- |',
      ...rows,
      '',
      '</details>',
    ].join('\n');
    const body = commentBody({ ...facts, report });
    expect(Buffer.byteLength(body, 'utf8')).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(body.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(body.startsWith(`${MARKER}\n### envsync plan`)).toBe(true);
    expect(body).toContain('too long for a comment');
    expect(body).toContain(
      'step summary of [the workflow run](https://github.com/acme/infra/actions/runs/42)',
    );
    // Whole rows only, and the block closed before the note.
    const lines = body.split('\n');
    const lastRow = lines.filter((l) => l.startsWith('| ➕')).at(-1) ?? '';
    expect(rows).toContain(lastRow);
    expect(body.match(/<details/g)?.length).toBe(body.match(/<\/details>/g)?.length);
    expect(body.indexOf('</details>')).toBeLessThan(body.indexOf('too long for a comment'));
  });

  it('never leaves a table with its header only', () => {
    const lines = ['intro', '', '| a | b |', '| --- | ---: |', `| ${'x'.repeat(100)} | y |`];
    expect(cutMarkdown(lines.join('\n'), 30).text).toBe('intro');
  });

  it('never leaves a block with its summary only', () => {
    const block = (name: string, row: string) => [
      `<details open><summary>${name}</summary>`,
      '',
      '| x |',
      '| --- |',
      `| ${row} |`,
      '',
      '</details>',
    ];
    const text = [...block('a', 'row'), '', ...block('b', 'y'.repeat(200))].join('\n');
    expect(cutMarkdown(text, 120).text).toBe(block('a', 'row').join('\n'));
  });

  it('a comment id that could break the marker is refused', () => {
    expect(() => commentMarker('a --> b')).toThrow(/comment-id/);
    expect(commentMarker('staging.eu-1')).toBe('<!-- envsync:staging.eu-1 -->');
  });
});
