/** `dataFile`: load at start, atomic coalesced writes, flushed on close. */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/runtime/errors.ts';
import { startEmulator } from '../../src/emulator/index.ts';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { apiClient, policyForm, TOKEN } from './api-client.ts';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'envsync-emulator-'));
  file = join(dir, 'store.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const put = (emu: TestEmulator, name: string, description = 'd') =>
  send(`${emu.url}/api/v2/environments/acme`, {
    method: 'PUT',
    headers: { authorization: 'Bearer t' },
    json: { name, description, type: 'K8S' },
    dispatcher: emu.agent,
  });
const saved = async () => JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;

describe('data file', () => {
  it.each([
    ['does not exist', undefined],
    ['is empty', '\n'],
  ])('starts empty when the file %s, and writes it on close', async (_label, content) => {
    if (content !== undefined) await writeFile(file, content);
    const emu = await startTestEmulator({ dataFile: file });
    expect((await emu.getStore()).orgs).toEqual({});
    await put(emu, 'prod');
    await emu.close();
    const prod = expect.objectContaining({ org: 'acme', name: 'prod', archived: false });
    expect(await saved()).toEqual({ version: 1, orgs: { acme: [prod] }, policies: {} });
  });

  it('keeps what the kosli profile holds across a restart: archived ones, documents, tags, policies', async () => {
    const options = {
      profile: 'kosli' as const,
      dataFile: file,
      tokens: [{ token: TOKEN, orgs: null }],
    };
    const first = await startTestEmulator(options);
    const api = apiClient(first);
    await api.put({ name: 'prod', description: 'p', type: 'K8S', require_provenance: true });
    await api.put({ name: 'dev', description: 'd', type: 'K8S' });
    await api.archive('dev');
    for (const yaml of ['a: 1\n', 'a: 2\n'])
      await api.putPolicy(policyForm({ name: 'sox', type: 'env' }, yaml));
    await api.policies('POST', 'prod', { policy_names: ['sox'] });
    await api.tags('prod', { set_tags: { team: 'core' } });
    const before = await first.getStore();
    await first.close();
    expect(await saved()).toEqual(before);
    const second = await startTestEmulator(options);
    try {
      expect(await second.getStore()).toEqual(before);
      const again = apiClient(second);
      const archived = {
        message: "Environment named 'dev' in organization 'acme' has been archived",
      };
      expect((await again.read('dev')).body).toEqual(archived);
      const kept = { require_provenance: true, policies: ['sox'], tags: { team: 'core' } };
      expect((await again.read('prod')).body).toMatchObject(kept);
      const third = await again.putPolicy(policyForm({ name: 'sox', type: 'env' }, 'a: 3\n'));
      expect(third.body).toMatchObject({ versions: [{}, {}, { version: 3 }] });
    } finally {
      await second.close();
    }
  });

  it('writes without waiting for close, and coalesces a burst into a consistent file', async () => {
    const emu = await startTestEmulator({ dataFile: file });
    try {
      await Promise.all(Array.from({ length: 200 }, (_, i) => put(emu, `env-${i}`)));
      let text = '';
      for (let i = 0; i < 200; i += 1) {
        text = await readFile(file, 'utf8').catch(() => '');
        if (text.includes('"env-199"') && (JSON.parse(text).orgs.acme ?? []).length === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(JSON.parse(text).orgs.acme).toHaveLength(200);
    } finally {
      await emu.close();
    }
    expect(await readdir(dir)).toEqual(['store.json']);
  });

  it('persists PUT /_emulator/store and reset', async () => {
    const emu = await startTestEmulator({ dataFile: file });
    await emu.putStore({ orgs: { beta: [{ name: 'x', type: 'S3', description: '' }] } });
    await emu.close();
    expect((await saved()).orgs).toHaveProperty('beta');
    const again = await startTestEmulator({ dataFile: file });
    await again.reset();
    await again.close();
    expect((await saved()).orgs).toEqual({});
  });

  it.each([
    ['not JSON', '{"orgs": '],
    ['not a store', '{"hello": "world"}'],
    ['a bad environment', '{"orgs": {"acme": [{"name": 5}]}}'],
  ])('refuses to start on a file that is %s, naming the file', async (_label, content) => {
    await writeFile(file, content);
    const attempt = startEmulator({ port: 0, dataFile: file });
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    await expect(attempt).rejects.toThrow(file);
    // The broken file is left alone for the user to inspect.
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('rejects close() when the data file cannot be written', async () => {
    const emu = await startTestEmulator({ dataFile: join(dir, 'missing-dir', 'store.json') });
    await put(emu, 'prod');
    await expect(emu.close()).rejects.toThrow(/could not write/);
  });
});
