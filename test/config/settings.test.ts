/** The shared settings as a command resolves them: defaults, the config file, the API address. */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isLoopbackHost, parseApiUrl } from '../../src/config/api-url.ts';
import { configFileSchema, readConfigFile } from '../../src/config/config-file.ts';
import { DAEMON_SETTINGS } from '../../src/config/daemon-settings.ts';
import type { Setting } from '../../src/config/setting.ts';
import { resolveSettings, SETTINGS } from '../../src/config/settings.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

/** The message of the error `resolveSettings` refuses the config file `text` with. */
async function refusal(text: string): Promise<string> {
  await tmp.write('c.yaml', text);
  const error = await resolveSettings({ config: 'c.yaml' }, {}, tmp.dir).then(
    () => expect.fail('the config file was accepted'),
    (thrown: unknown) => (thrown as Error).message,
  );
  return error.replaceAll(tmp.path('c.yaml'), 'c.yaml');
}

// Each setting's default, and the precedence of each row: test/config/table.test.ts.
describe('settings: flags > env > file > defaults', () => {
  it('takes the file over defaults, env over the file, flags over env; paths relative to the file', async () => {
    await tmp.write(
      'conf/envsync.yaml',
      'concurrency: 3\nretries: 2\ntimeout: 5s\nmanifests: ../m\n',
    );
    const config = 'conf/envsync.yaml';
    expect(await resolveSettings({ config }, {}, tmp.dir)).toMatchObject({
      concurrency: 3,
      retries: 2,
      timeoutMs: 5000,
      manifests: tmp.path('m'),
      fileDir: tmp.path('conf'),
    });
    const env = { ENVSYNC_CONCURRENCY: '5', ENVSYNC_MANIFESTS: 'x', ENVSYNC_CONFIG: config };
    expect(await resolveSettings({}, env, tmp.dir)).toMatchObject({
      concurrency: 5,
      retries: 2,
      manifests: 'x',
    });
    expect((await resolveSettings({ config, concurrency: '7' }, env, tmp.dir)).concurrency).toBe(7);
  });

  it('locates every config file problem at once: line, column and key, with a did-you-mean', async () => {
    expect(
      (
        await refusal(
          '# settings\nmanifests: m\nlogLevel: loud\nretries: many\ntimeout: 30\nconcurency: 3\n',
        )
      ).split('\n'),
    ).toEqual([
      'config file c.yaml:3:11 logLevel: "loud" is not one of trace, debug, info, warn, error, fatal, silent',
      'config file c.yaml:4:10 retries: "many" must be a whole number from 0 to 20',
      'config file c.yaml:5:10 timeout: 30 is not a duration (use e.g. 500ms, 30s, 5m)',
      'config file c.yaml:6:1 concurency: unknown key (did you mean "concurrency"?); the keys are listed in config/envsync.example.yaml',
    ]);
    expect(await refusal('manifests: m\norgs: [acme\n')).toMatch(
      /^config file c\.yaml:\d+:\d+: not valid YAML/,
    );
    expect(await refusal('manifests: m\ntoken: abc\n')).toBe(
      'config file c.yaml:2:1 token: is not read from a config file (it would end up in git); set ENVSYNC_TOKEN or tokenFile',
    );
    expect(await refusal('- a\n')).toMatch(/^config file c\.yaml:1:1 .*\(a mapping of keys\)$/);
    // The type as the file writes it: a number is not a text, nor a text a number.
    expect(await refusal('concurrency: "8"\nlisten: 9464\n')).toMatch(
      /^config file c\.yaml:1:14 concurrency: .*number.*\nconfig file c\.yaml:2:9 listen: 9464 is not text$/,
    );
  });

  it('reads switches as true or false only, as manifests do', async () => {
    for (const word of ['True', 'TRUE', 'yes', 'on', '"true"']) {
      expect(await refusal(`insecureHttp: ${word}\n`)).toMatch(
        /c\.yaml:1:15 insecureHttp: .*(boolean|true or false)/,
      );
    }
    await tmp.write('e.yaml', 'insecureHttp: true\ndetailedExitcode: false\n');
    expect(await resolveSettings({ config: 'e.yaml' }, {}, tmp.dir)).toMatchObject({
      insecureHttp: true,
      detailedExitcode: false,
    });
  });

  it('config/envsync.example.yaml is a valid config file that shows every key and its variable', async () => {
    const file = new URL('../../config/envsync.example.yaml', import.meta.url).pathname;
    const table = { ...SETTINGS, ...DAEMON_SETTINGS };
    await expect(readConfigFile(file, table)).resolves.toBeTypeOf('object');
    const text = await readFile(file, 'utf8');
    const keys = Object.keys(configFileSchema(table).shape);
    expect(keys).toHaveLength(43);
    for (const key of keys) expect(text, key).toMatch(new RegExp(`^#? ?${key}:`, 'm'));
    const settings: Setting[] = Object.values(table);
    const variables = settings.flatMap((s) => (s.file === undefined ? [] : [s.env ?? '-']));
    for (const name of variables) expect(text).toContain(name);
  });
});

describe('--api-url', () => {
  const strict = { insecureHttp: false };
  it('requires https unless the host is loopback or --insecure-http is given', () => {
    expect(parseApiUrl('https://api.example.com', strict).origin).toBe('https://api.example.com');
    expect(parseApiUrl('http://127.0.0.1:8080', strict).port).toBe('8080');
    expect(parseApiUrl('http://[::1]:1', strict).hostname).toBe('[::1]');
    expect(() => parseApiUrl('http://api.example.com', strict)).toThrow(/clear text/);
    expect(parseApiUrl('http://api.example.com', { insecureHttp: true }).protocol).toBe('http:');
  });

  it('refuses credentials (without repeating them), queries, fragments and other schemes', () => {
    expect(() => parseApiUrl('https://u:p@api.example.com', strict)).toThrow(/credentials/);
    expect(() => parseApiUrl('https://u:secret@[bad', strict)).toThrow(
      '"https://***@[bad" is not a URL',
    );
    expect(() => parseApiUrl('https://api.example.com/?x=1', strict)).toThrow(/query/);
    expect(() => parseApiUrl('ftp://api.example.com', strict)).toThrow(/ftp/);
  });

  it('knows loopback hosts', () => {
    expect(['localhost', '127.0.0.1', '127.255.0.9', '::1', '[::1]'].every(isLoopbackHost)).toBe(
      true,
    );
    expect(['10.0.0.1', '128.0.0.1', 'localhost.example.com'].some(isLoopbackHost)).toBe(false);
  });
});
