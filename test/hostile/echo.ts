/**
 * A service that echoes tokens back, and the search for them in what envsync wrote. Every spelling
 * is made here with Node's own encoders, never with envsync's code, so the search does not share
 * a blind spot with the masking it checks.
 */
import { startFakeApi } from '../helpers/fake-api.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/**
 * HTML's named references for the token's punctuation: envsync does not read them (what stands
 * between two of them is masked where it is a run of 12 or more of the token).
 */
const NAMED: Readonly<Record<string, string>> = {
  '+': '&plus;',
  '/': '&sol;',
  '.': '&period;',
  _: '&lowbar;',
  '-': '&hyphen;',
  '~': '&tilde;',
  '=': '&equals;',
};

/** The token as a careless service or proxy echoes it back, each way by name. */
function encodedEchoes(token: string): Record<string, string> {
  const bearer = `Bearer ${token}`;
  return {
    // Seven bytes before the token: it starts one byte into a base64 group.
    'base64 of the Authorization header': b64(bearer),
    // Eight bytes before it: two bytes in.
    'base64 of Basic credentials': b64(`envsync:${token}`),
    'base64 of the bare token': b64(token),
    'unpadded base64url of the header': Buffer.from(bearer).toString('base64url'),
    'hex of the token': Buffer.from(token).toString('hex'),
    'upper-case hex of the token': Buffer.from(token).toString('hex').toUpperCase(),
    'named HTML references': Array.from(bearer, (c) => NAMED[c] ?? c).join(''),
    'form-encoded query': new URLSearchParams({ access_token: token }).toString(),
    'base64 in a JSON string with escaped slashes': JSON.stringify(b64(`x:${token}`))
      .slice(1, -1)
      .replace(/\//g, '\\/'),
    'percent-encoded base64': encodeURIComponent(b64(bearer)),
  };
}

/** The windows of `length` characters of `text`. */
function windows(text: string, length: number): string[] {
  return Array.from({ length: Math.max(0, text.length - length + 1) }, (_, i) =>
    text.slice(i, i + length),
  );
}

/**
 * What to look for, by name: 12 characters in a row of the token as it is, JSON-escaped or
 * percent-encoded, of its base64 or base64url at each alignment (only the characters made of
 * the token's bits alone) and of its hex of either case (docs/security.md: what is masked).
 */
function needles(token: string): [string, string[]][] {
  const bytes = Buffer.from(token);
  const spans: [string, string[]][] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const stable = encoded.slice(
      Math.ceil((offset * 8) / 6),
      Math.floor(((offset + bytes.length) * 8) / 6),
    );
    const url = stable.replace(/\+/g, '-').replace(/\//g, '_');
    spans.push([`base64 at offset ${offset}`, [...windows(stable, 12), ...windows(url, 12)]]);
  }
  const hex = bytes.toString('hex');
  return [
    ['the token', windows(token, 12)],
    ['the token JSON-escaped', windows(JSON.stringify(token).slice(1, -1), 12)],
    ['the token percent-encoded', windows(encodeURIComponent(token), 12)],
    ...spans,
    ['hex', [...windows(hex, 12), ...windows(hex.toUpperCase(), 12)]],
  ];
}

/**
 * Each sink that holds a spelling of one of `tokens`: the sink, whose token and which spellings,
 * by name only (never the text itself: a failing test must not print the token).
 */
export function leaks(
  outputs: readonly [string, string][],
  tokens: Readonly<Record<string, string>>,
): string[] {
  return outputs.flatMap(([sink, text]) =>
    Object.entries(tokens).flatMap(([whose, token]) => {
      const found = needles(token)
        .filter(([, parts]) => parts.some((part) => text.includes(part)))
        .map(([name]) => name);
      return found.length === 0 ? [] : [`${sink}: ${whose}'s token: ${found.join(', ')}`];
    }),
  );
}

/** A message whose excerpt (300 characters) would end in the middle of the echo. */
const long = (echo: string) =>
  `${'request rejected; '.repeat(15)}it carried Authorization: ${echo} ${'.'.repeat(200)}`;

/**
 * The fake service. Every answer echoes the token the request was sent with (the Authorization
 * header as it is, JSON-escaped with `\/`, every character a `\u` escape: the last two read back
 * as the token once the JSON is parsed) and every spelling of `encodedEchoes` of each of `tokens`
 * (with a token per org, every org's answer echoes every org's token). By org: acme lists `web`
 * as declared and `old`, which no manifest declares, with the echoes in its description and a
 * tag, and refuses every change (400, the echoes in its message, longer than the excerpt, in
 * its errors and in a header); beta refuses the token (403); gamma answers an HTML error page
 * (500); delta asks to slow down (429); names lists environments named like the token; plain's
 * listing is not JSON and its Content-Type carries the echo. The policy documents carry them too.
 */
export function startEchoingService(tokens: readonly string[]) {
  const named = tokens
    .flatMap((token) => Object.entries(encodedEchoes(token)).map(([name, e]) => `${name}: ${e}`))
    .join('; ');
  return startFakeApi((req, res) => {
    const auth = req.headers.authorization ?? '';
    const token = auth.replace(/^Bearer /, '');
    const slashed = JSON.stringify(auth).slice(1, -1).replace(/\//g, '\\/');
    const unicode = Array.from(auth, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    // Written into the JSON text as they are, so that parsing it gives back the token.
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(
          JSON.stringify(body).replaceAll('@SLASHED@', slashed).replaceAll('@U@', unicode.join('')),
        );
    const text = (status: number, type: string, body: string) =>
      res.writeHead(status, { 'content-type': type }).end(body);
    if (req.url?.startsWith('/api/v2/policies/') === true) {
      const yaml = `key: ${long('@SLASHED@')}\nnote: ${JSON.stringify(named)}\n`;
      json(200, [
        {
          name: 'echo',
          description: `@SLASHED@ ${named}`,
          versions: [{ version: 1, policy_yaml: yaml }],
        },
      ]);
      return;
    }
    const org = /\/api\/v2\/environments\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
    const nameLike = token.replace(/[^A-Za-z0-9._~-]/g, '') || 'x';
    if (org === 'acme' && req.method === 'GET')
      json(200, [
        { name: 'web', type: 'K8S', description: 'w' },
        {
          name: 'old',
          type: 'K8S',
          description: `${long('@SLASHED@')} @U@`,
          tags: { echo: named },
        },
      ]);
    else if (org === 'acme')
      json(
        400,
        { message: long('@SLASHED@'), errors: { authorization: named, token } },
        { 'x-echo': named },
      );
    else if (org === 'beta') json(403, { message: `forbidden: @U@ is not allowed; ${named}` });
    else if (org === 'gamma') text(500, 'text/html', `<html>${long(auth)}<p>${named}</p></html>`);
    else if (org === 'delta')
      json(429, { message: `slow down, ${long(token)}` }, { 'retry-after': '0' });
    else if (org === 'names')
      json(200, [
        { name: nameLike, type: 'K8S', description: '@SLASHED@' },
        { name: `unmanaged-${nameLike.slice(0, 40)}`, type: 'K8S', description: named },
      ]);
    else if (org === 'plain')
      text(200, `text/plain; echo="${b64(auth)}"`, `not json: ${long(auth)} ${named}`);
    else json(404, { message: 'no such org' });
  });
}

/** The orgs of the service; acme has a change to send (refused) and one to create. */
export const ECHO_ORGS = ['acme', 'beta', 'gamma', 'delta', 'names', 'plain'];
export const ECHO_MANIFESTS: Readonly<Record<string, string>> = Object.fromEntries(
  ECHO_ORGS.map((org) => [
    `${org}.yaml`,
    `org: ${org}\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n  - name: api\n    type: K8S\n    description: d\n`,
  ]),
);
