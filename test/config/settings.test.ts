import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isLoopbackHost, parseApiUrl } from '../../src/config/api-url.ts';
import { parseDuration } from '../../src/config/duration.ts';
import { resolveSettings } from '../../src/config/settings.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('settings precedence: flags > env > file > defaults', () => {
  it('uses defaults when nothing is given', async () => {
    const settings = await resolveSettings({}, {}, tmp.dir);
    expect(settings).toMatchObject({
      manifests: 'manifests',
      concurrency: 8,
      retries: 4,
      timeoutMs: 30_000,
      output: 'text',
      // No level: the command picks it (runtime/log-line.ts).
      logLevel: undefined,
      logFormat: 'auto',
      detailedExitcode: false,
    });
  });

  it('takes the file over defaults, env over the file, flags over env', async () => {
    await tmp.write(
      'conf/envsync.yaml',
      'concurrency: 3\nretries: 2\ntimeout: 5s\nmanifests: ../m\noutput: markdown\n',
    );
    const file = await resolveSettings({ config: 'conf/envsync.yaml' }, {}, tmp.dir);
    expect(file).toMatchObject({
      concurrency: 3,
      retries: 2,
      timeoutMs: 5000,
      manifests: tmp.path('m'),
      output: 'markdown',
    });
    const env = await resolveSettings(
      { config: 'conf/envsync.yaml' },
      { ENVSYNC_CONCURRENCY: '5', ENVSYNC_MANIFESTS: 'x' },
      tmp.dir,
    );
    expect(env).toMatchObject({ concurrency: 5, retries: 2, manifests: 'x' });
    const flags = await resolveSettings(
      { config: 'conf/envsync.yaml', concurrency: '7' },
      { ENVSYNC_CONCURRENCY: '5' },
      tmp.dir,
    );
    expect(flags.concurrency).toBe(7);
  });

  it('rejects unknown keys, wrong types and a token in the config file', async () => {
    await tmp.write('a.yaml', 'concurency: 3\n');
    await expect(resolveSettings({ config: 'a.yaml' }, {}, tmp.dir)).rejects.toThrow(
      /a\.yaml:1:1 concurency: unknown key \(did you mean "concurrency"\?\)/,
    );
    await tmp.write('b.yaml', 'retries: many\n');
    await expect(resolveSettings({ config: 'b.yaml' }, {}, tmp.dir)).rejects.toThrow(
      /b\.yaml:1:10 retries: "many"/,
    );
    // Switches are true or false only, as docs/flags.md says: `True` and `yes` are not switches.
    for (const word of ['True', 'TRUE', 'yes', 'on', '"true"']) {
      await tmp.write('d.yaml', `insecureHttp: ${word}\n`);
      await expect(resolveSettings({ config: 'd.yaml' }, {}, tmp.dir)).rejects.toThrow(
        /d\.yaml:1:15 insecureHttp: .*(boolean|true or false)/,
      );
    }
    await tmp.write('e.yaml', 'insecureHttp: true\ndetailedExitcode: false\n');
    expect(await resolveSettings({ config: 'e.yaml' }, {}, tmp.dir)).toMatchObject({
      insecureHttp: true,
      detailedExitcode: false,
    });
    await tmp.write('c.yaml', 'token: abc\n');
    await expect(resolveSettings({ config: 'c.yaml' }, {}, tmp.dir)).rejects.toThrow(
      /ENVSYNC_TOKEN/,
    );
  });

  it('locates every config file problem at once: file, line, column and key, with a did-you-mean', async () => {
    await tmp.write(
      'all.yaml',
      '# settings\nmanifests: m\nconcurency: 3\nretries: many\ntimeout: 30\nlogLevel: loud\n',
    );
    const error = await resolveSettings({ config: 'all.yaml' }, {}, tmp.dir).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    const file = tmp.path('all.yaml');
    expect(error?.message.split('\n')).toEqual([
      `config file ${file}:3:1 concurency: unknown key (did you mean "concurrency"?); the keys are listed in config/envsync.example.yaml`,
      `config file ${file}:4:10 retries: "many" must be a whole number from 0 to 20`,
      `config file ${file}:5:10 timeout: 30 is not a duration (use e.g. 500ms, 30s, 5m)`,
      `config file ${file}:6:11 logLevel: "loud" is not one of trace, debug, info, warn, error, fatal, silent`,
    ]);
    await tmp.write('syntax.yaml', 'manifests: m\norgs: [acme\n');
    await expect(resolveSettings({ config: 'syntax.yaml' }, {}, tmp.dir)).rejects.toThrow(
      /syntax\.yaml:\d+:\d+: not valid YAML/,
    );
    await tmp.write('token.yaml', 'manifests: m\ntoken: abc\n');
    await expect(resolveSettings({ config: 'token.yaml' }, {}, tmp.dir)).rejects.toThrow(
      /token\.yaml:2:1 token: is not read from a config file/,
    );
  });

  it('rejects bad flag values with the flag name', async () => {
    await expect(resolveSettings({ concurrency: '0' }, {}, tmp.dir)).rejects.toThrow(
      /--concurrency/,
    );
    await expect(resolveSettings({ timeout: '30' }, {}, tmp.dir)).rejects.toThrow(
      /--timeout.*duration/,
    );
    await expect(resolveSettings({ output: 'yaml' }, {}, tmp.dir)).rejects.toThrow(
      /--output.*text, json, markdown/,
    );
  });
});

describe('durations', () => {
  it.each([
    ['200ms', 200],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1.5s', 1500],
    ['0', 0],
    ['30', undefined],
    ['s', undefined],
    ['-1s', undefined],
  ])('%s -> %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});

describe('--api-url', () => {
  it('requires https unless the host is loopback or --insecure-http is given', () => {
    expect(parseApiUrl('https://api.example.com', { insecureHttp: false }).origin).toBe(
      'https://api.example.com',
    );
    expect(parseApiUrl('http://127.0.0.1:8080', { insecureHttp: false }).port).toBe('8080');
    expect(parseApiUrl('http://localhost:1', { insecureHttp: false }).hostname).toBe('localhost');
    expect(parseApiUrl('http://[::1]:1', { insecureHttp: false }).hostname).toBe('[::1]');
    expect(() => parseApiUrl('http://api.example.com', { insecureHttp: false })).toThrow(
      /clear text/,
    );
    expect(parseApiUrl('http://api.example.com', { insecureHttp: true }).protocol).toBe('http:');
  });

  it('refuses credentials, queries, fragments and other schemes', () => {
    expect(() => parseApiUrl('https://u:p@api.example.com', { insecureHttp: false })).toThrow(
      /credentials/,
    );
    expect(() => parseApiUrl('https://api.example.com/?x=1', { insecureHttp: false })).toThrow(
      /query/,
    );
    expect(() => parseApiUrl('ftp://api.example.com', { insecureHttp: false })).toThrow(/ftp/);
    expect(() => parseApiUrl('not a url', { insecureHttp: false })).toThrow(/not a URL/);
  });

  it('knows loopback hosts', () => {
    expect(['localhost', '127.0.0.1', '127.255.0.9', '::1', '[::1]'].every(isLoopbackHost)).toBe(
      true,
    );
    expect(
      ['10.0.0.1', 'example.com', '128.0.0.1', 'localhost.example.com'].some(isLoopbackHost),
    ).toBe(false);
  });
});

describe('config/envsync.example.yaml', () => {
  it('is a valid config file that documents every key', async () => {
    const { readFile } = await import('node:fs/promises');
    const { readConfigFile } = await import('../../src/config/settings.ts');
    const { configFileSchema } = await import('../../src/config/config-file.ts');
    const file = new URL('../../config/envsync.example.yaml', import.meta.url).pathname;
    await expect(readConfigFile(file)).resolves.toBeTypeOf('object');
    const text = await readFile(file, 'utf8');
    for (const key of Object.keys(configFileSchema.shape))
      expect(text, key).toMatch(new RegExp(`^#? ?${key}:`, 'm'));
  });
});
