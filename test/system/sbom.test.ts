/**
 * The SBOM each release attaches (scripts/sbom.sh): every package a user installs, at its locked
 * version, and no dev dependency. It runs npm against the registry, hence the system suite.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as unknown;

interface Lock {
  packages: Record<string, { name?: string; version: string; dev?: boolean }>;
}
type Component = { name: string; version: string; purl: string };
type Dependencies = Record<string, string>;

/** name@version of each package the lock file installs for a user, from its location. */
function runtimePackages(lock: Lock): string[] {
  return Object.entries(lock.packages)
    .filter(([location, entry]) => location !== '' && entry.dev !== true)
    .map(([location, entry]) => {
      const name = entry.name ?? location.slice(location.lastIndexOf('node_modules/') + 13);
      return `${name}@${entry.version}`;
    })
    .sort();
}

describe('the SBOM of a release', () => {
  it('lists every runtime dependency with its locked version, and none of the dev dependencies', async () => {
    const result = await runProcess('bash', [path.join(ROOT, 'scripts/sbom.sh')], {
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const sbom = JSON.parse(result.stdout) as { components: Component[] };
    const { version, dependencies, devDependencies } = read('package.json') as {
      version: string;
      dependencies: Dependencies;
      devDependencies: Dependencies;
    };
    const purl = `pkg:npm/envsync@${version}`;
    expect(sbom).toMatchObject({
      bomFormat: 'CycloneDX',
      metadata: { component: { name: 'envsync', version, purl } },
    });
    const listed = sbom.components.map((c) => `${c.name}@${c.version}`).sort();
    expect(listed).toEqual(runtimePackages(read('package-lock.json') as Lock));
    // The direct dependencies are there, yaml among them (which a dev dependency uses too, and
    // `npm sbom --omit dev` leaves out); no dev dependency is.
    const names = new Set(sbom.components.map((c) => c.name));
    for (const name of Object.keys(dependencies)) expect(names.has(name), name).toBe(true);
    for (const name of Object.keys(devDependencies)) expect(names.has(name), name).toBe(false);
    for (const c of sbom.components)
      expect(c.purl).toBe(`pkg:npm/${c.name.replace('@', '%40')}@${c.version}`);
  });
});
