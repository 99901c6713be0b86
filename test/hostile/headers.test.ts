/** Headers of 15,000 characters (under the 16 KiB Node accepts): no message quotes over 300. */
import { afterEach, describe, expect, it } from 'vitest';
import { envsyncInProcess } from '../helpers/cli.ts';
import { send, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';

const LONG = 15_000;
const SHOWN = 300;

/** The longest run of `char` in `text`. */
function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
});

describe('a huge response header', () => {
  it('is quoted 300 characters long at most, in every output of plan', async () => {
    const api = await startFakeApi((_req, res) => {
      res
        .writeHead(200, { 'content-type': `text/html; q=${'x'.repeat(LONG)}` })
        .end('<html>maintenance</html>');
    });
    const tmp = await tempDir();
    cleanups.push(
      () => api.close(),
      () => tmp.cleanup(),
    );
    await tmp.write(
      'manifests/acme.yaml',
      'org: acme\nenvironments: [{name: web, type: K8S, description: d}]\n',
    );
    for (const format of ['text', 'json', 'markdown']) {
      const result = await envsyncInProcess(
        ['plan', '--manifests', 'manifests', '--api-url', api.url, '-o', format],
        { cwd: tmp.dir, env: { ENVSYNC_TOKEN: 'hdr-Zq8Lw3Xv7Kp2' } },
      );
      expect(result.code, format).toBe(1);
      expect(result.stdout, format).toContain('the listing is not JSON');
      expect(result.stdout, format).toContain('content-type text/html; q=xxx');
      const longest = longestRun(`${result.stdout}\n${result.stderr}`, 'x');
      expect(longest, format).toBeGreaterThan(100);
      expect(longest, format).toBeLessThanOrEqual(SHOWN);
    }
  });
});

describe('a huge request header sent to the emulator', () => {
  let emulator: TestEmulator;

  it('is quoted 300 characters long at most in its answers', async () => {
    emulator = await startTestEmulator({ tokens: [{ token: 'hdr-Zq8Lw3Xv7Kp2', orgs: null }] });
    cleanups.push(() => emulator.close());
    const site = await send(`${emulator.url}/_emulator/store`, {
      headers: { 'sec-fetch-site': 'y'.repeat(LONG) },
    });
    expect(site.status).toBe(403);
    const scheme = await send(`${emulator.url}/api/v2/environments/acme`, {
      headers: { authorization: `${'Z'.repeat(LONG)} abc` },
    });
    expect(scheme.status).toBe(401);
    for (const [answer, char] of [
      [site, 'y'],
      [scheme, 'Z'],
    ] as const) {
      const longest = longestRun(answer.text, char);
      expect(longest, char).toBeGreaterThan(100);
      expect(longest, char).toBeLessThanOrEqual(SHOWN);
    }
  });
});
