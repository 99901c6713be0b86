/**
 * scripts/release-notes.ts: the notes are the changelog's section for the tag; nothing is published
 * under a tag that is not the package's and the chart's version, or whose section is undated.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { releaseNotes, type ReleaseFiles } from '../../scripts/release-notes.ts';
import { runProcess } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(`${ROOT}${file}`, 'utf8');

const CHANGELOG = `# Changelog

Intro.

## [1.3.0] - 2026-12-01

### Added

- The chart.

## [1.2.0] - 2026-06-01

- Older.

[1.3.0]: https://example.com/v1.3.0
`;
const files = (version: string, changelog = CHANGELOG): ReleaseFiles => ({
  changelog,
  packageJson: JSON.stringify({ name: 'envsync', version }),
  chartYaml: `apiVersion: v2\nname: envsync\nversion: ${version}\nappVersion: '${version}'\n`,
});

describe('release notes', () => {
  it("are the tag's section of the changelog, without its heading or the link definitions", () => {
    expect(releaseNotes('v1.3.0', files('1.3.0'))).toBe('### Added\n\n- The chart.\n');
    expect(releaseNotes('v1.2.0', files('1.2.0'))).toBe('- Older.\n');
  });

  it('refuse a tag that is not the version of the package and of the chart', () => {
    expect(() => releaseNotes('1.3.0', files('1.3.0'))).toThrow('is not vMAJOR.MINOR.PATCH');
    expect(() => releaseNotes('v1.3.0-rc.1', files('1.3.0'))).toThrow('not vMAJOR');
    expect(() => releaseNotes('v1.3.0', files('1.2.0'))).toThrow(
      'package.json version is 1.2.0, the tag v1.3.0',
    );
    const chartBehind = { ...files('1.3.0'), chartYaml: "version: 1.3.0\nappVersion: '1.2.0'\n" };
    expect(() => releaseNotes('v1.3.0', chartBehind)).toThrow('Chart.yaml appVersion is 1.2.0');
  });

  it('refuse a version the changelog has no dated section for', () => {
    expect(() => releaseNotes('v1.4.0', files('1.4.0'))).toThrow('no section ## [1.4.0]');
    const undated = CHANGELOG.replace('## [1.3.0] - 2026-12-01', '## [1.3.0] - Unreleased');
    expect(() => releaseNotes('v1.3.0', files('1.3.0', undated))).toThrow('has no release date');
    const empty = CHANGELOG.replace(/### Added\n\n- The chart\.\n/, '');
    expect(() => releaseNotes('v1.3.0', files('1.3.0', empty))).toThrow('is empty');
  });

  it("this checkout's package, chart and changelog agree on its version, once its section is dated", () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    const dated = read('CHANGELOG.md').replace(`## [${version}] - Unreleased`, (heading) =>
      heading.replace('Unreleased', '2026-12-01'),
    );
    const checkout = {
      changelog: dated,
      packageJson: read('package.json'),
      chartYaml: read('charts/envsync/Chart.yaml'),
    };
    expect(releaseNotes(`v${version}`, checkout)).toContain('### Added');
  });

  it('the script prints the notes, or says what to fix and exits 1', async () => {
    const env = { PATH: process.env['PATH'] ?? '' };
    const script = `${ROOT}scripts/release-notes.ts`;
    const result = await runProcess(process.execPath, [script, 'v0.0.1'], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^release-notes: package\.json version is .+, the tag v0\.0\.1/);
  });
});
