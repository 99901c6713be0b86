/** `dataFile`: load at start, atomic coalesced writes, flushed on close. */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/runtime/errors.ts';
import { startEmulator } from '../../src/emulator/index.ts';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient, policyForm } from './api-client.ts';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'envsync-emulator-'));
  file = join(dir, 'store.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function put(emu: TestEmulator, name: string, description = 'd'): Promise<unknown> {
  return send(`${emu.url}/api/v2/environments/acme`, {
    method: 'PUT',
    headers: { authorization: 'Bearer t' },
    json: { name, description, type: 'K8S' },
    dispatcher: emu.agent,
  });
}

describe('data file', () => {
  it('starts empty when the file does not exist, and writes it on close', async () => {
    const emu = await startTestEmulator({ dataFile: file });
    expect((await emu.getStore()).orgs).toEqual({});
    await put(emu, 'prod');
    await emu.close();
    const saved: unknown = JSON.parse(await readFile(file, 'utf8'));
    expect(saved).toEqual({
      version: 1,
      orgs: { acme: [expect.objectContaining({ org: 'acme', name: 'prod', archived: false })] },
      policies: {},
    });
  });

  it('treats an empty file as an empty store', async () => {
    await writeFile(file, '\n');
    const emu = await startTestEmulator({ dataFile: file });
    expect((await emu.getStore()).orgs).toEqual({});
    await put(emu, 'prod');
    await emu.close();
    expect(JSON.parse(await readFile(file, 'utf8')).orgs.acme).toHaveLength(1);
  });

  it('keeps the store across a restart', async () => {
    const first = await startTestEmulator({ dataFile: file });
    await put(first, 'prod', 'kept');
    await put(first, 'dev', 'also kept');
    const before = await first.getStore();
    await first.close();
    const second = await startTestEmulator({ dataFile: file });
    try {
      expect(await second.getStore()).toEqual(before);
      const listing = await send(`${second.url}/api/v2/environments/acme`, {
        headers: { authorization: 'Bearer t' },
        dispatcher: second.agent,
      });
      expect(listing.body).toEqual({
        env: [
          { org: 'acme', name: 'dev', type: 'K8S', description: 'also kept' },
          { org: 'acme', name: 'prod', type: 'K8S', description: 'kept' },
        ],
      });
    } finally {
      await second.close();
    }
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
    await api.putPolicy(policyForm({ name: 'sox', type: 'env' }, 'a: 1\n'));
    await api.putPolicy(policyForm({ name: 'sox', type: 'env' }, 'a: 2\n'));
    await api.policies('POST', 'prod', { policy_names: ['sox'] });
    await api.tags('prod', { set_tags: { team: 'core' } });
    const before = await first.getStore();
    await first.close();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(before);
    const second = await startTestEmulator(options);
    try {
      expect(await second.getStore()).toEqual(before);
      const again = apiClient(second);
      expect((await again.read('dev')).body).toEqual({
        message: "Environment named 'dev' in organization 'acme' has been archived",
      });
      expect((await again.read('prod')).body).toMatchObject({
        require_provenance: true,
        policies: ['sox'],
        tags: { team: 'core' },
      });
      expect(
        (await again.putPolicy(policyForm({ name: 'sox', type: 'env' }, 'a: 3\n'))).body,
      ).toMatchObject({ versions: [{}, {}, { version: 3 }] });
    } finally {
      await second.close();
    }
  });

  it('writes without waiting for close, and coalesces a burst into a consistent file', async () => {
    const emu = await startTestEmulator({ dataFile: file });
    try {
      await Promise.all(Array.from({ length: 200 }, (_, i) => put(emu, `env-${i}`)));
      let saved = '';
      for (let i = 0; i < 200; i += 1) {
        saved = await readFile(file, 'utf8').catch(() => '');
        if (saved.includes('"env-199"') && (JSON.parse(saved).orgs.acme ?? []).length === 200)
          break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(JSON.parse(saved).orgs.acme).toHaveLength(200);
    } finally {
      await emu.close();
    }
    expect(await readdir(dir)).toEqual(['store.json']);
  });

  it('persists PUT /_emulator/store and reset', async () => {
    const emu = await startTestEmulator({ dataFile: file });
    await emu.putStore({ orgs: { beta: [{ name: 'x', type: 'S3', description: '' }] } });
    await emu.close();
    expect(JSON.parse(await readFile(file, 'utf8')).orgs).toHaveProperty('beta');
    const again = await startTestEmulator({ dataFile: file });
    await again.reset();
    await again.close();
    expect(JSON.parse(await readFile(file, 'utf8')).orgs).toEqual({});
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
