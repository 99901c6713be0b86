/**
 * envsync loads only the parts of undici it uses (src/api/undici.ts). Each case runs in a fresh
 * Node process, since what a process has loaded is the point: an HTTP/1.1 request loads neither
 * undici's entry point nor `node:http2`, and a client that does ask for HTTP/2 still gets it.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';

const UNDICI = fileURLToPath(new URL('../../src/api/undici.ts', import.meta.url));
const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));

/** Runs `body` as an ES module in a new Node process; returns what it printed as JSON. */
async function inFreshNode(body: string): Promise<Record<string, unknown>> {
  const tmp = await tempDir();
  try {
    const script = await tmp.write(
      'probe.mjs',
      `import { Pool } from ${JSON.stringify(UNDICI)};\n${body}`,
    );
    const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    return JSON.parse(run.stdout) as Record<string, unknown>;
  } finally {
    await tmp.cleanup();
  }
}

describe('the light undici', () => {
  it('answers an HTTP/1.1 request without loading node:http2 or undici’s entry point', async () => {
    const out = await inFreshNode(`
      import { createRequire } from 'node:module';
      // Through require: an ES import of node:http loads node:http2 by itself (see src/runtime/builtins.ts).
      const { createServer } = createRequire(import.meta.url)('node:http');
      const server = createServer((req, res) => res.end(JSON.stringify({ version: req.httpVersion })));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const pool = new Pool('http://127.0.0.1:' + server.address().port);
      const response = await pool.request({ method: 'GET', path: '/' });
      const body = JSON.parse(await response.body.text());
      await pool.close();
      server.close();
      const cache = Object.keys(createRequire(import.meta.url).cache);
      process.stdout.write(JSON.stringify({
        status: response.statusCode,
        version: body.version,
        http2: process.moduleLoadList.includes('NativeModule http2'),
        entryPoint: cache.some((f) => /[\\\\/]undici[\\\\/]index\\.js$/.test(f)),
        h2Client: cache.filter((f) => f.endsWith('client-h2.js')).length,
      }));
    `);
    expect(out).toEqual({
      status: 200,
      version: '1.1',
      http2: false,
      entryPoint: false,
      h2Client: 1,
    });
  });

  it('still speaks HTTP/2 to a client that asks for it: the real HTTP/2 client loads then', async () => {
    const out = await inFreshNode(`
      import { createSecureServer } from 'node:http2';
      import { readFileSync } from 'node:fs';
      const tls = ${JSON.stringify(TLS)};
      const server = createSecureServer({
        key: readFileSync(tls + 'server-key.pem'),
        cert: readFileSync(tls + 'server.pem'),
      }, (req, res) => res.end(JSON.stringify({ version: req.httpVersion })));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const pool = new Pool('https://localhost:' + server.address().port, {
        allowH2: true,
        connect: { ca: readFileSync(tls + 'ca.pem'), servername: 'localhost', host: '127.0.0.1' },
      });
      const first = await pool.request({ method: 'GET', path: '/' });
      const one = JSON.parse(await first.body.text());
      const second = await pool.request({ method: 'GET', path: '/' });
      const two = JSON.parse(await second.body.text());
      await pool.close();
      server.close();
      process.stdout.write(JSON.stringify({ status: first.statusCode, versions: [one.version, two.version] }));
    `);
    expect(out).toEqual({ status: 200, versions: ['2.0', '2.0'] });
  });
});
