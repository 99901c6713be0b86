/**
 * The notes of a release, from CHANGELOG.md: `node scripts/release-notes.ts v0.2.0` prints the
 * changelog's section for 0.2.0 (what the release workflow puts in the GitHub release), after
 * checking that the tag is the version of everything the release publishes: the npm package
 * (package.json) and the chart (Chart.yaml's version and appVersion), and that the section is
 * dated. Anything else exits 1 with what to fix, before the workflow publishes anything.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface ReleaseFiles {
  readonly changelog: string;
  readonly packageJson: string;
  readonly chartYaml: string;
}

/** The changelog's section for the tag's version, or an error saying what does not agree. */
export function releaseNotes(tag: string, files: ReleaseFiles): string {
  const version = /^v(\d+\.\d+\.\d+)$/.exec(tag)?.[1];
  if (version === undefined) throw new Error(`the tag ${tag} is not vMAJOR.MINOR.PATCH`);
  const { version: npm } = JSON.parse(files.packageJson) as { version?: unknown };
  const chart = parse(files.chartYaml) as { version?: unknown; appVersion?: unknown };
  const versions = [
    ['package.json version', npm],
    ['charts/envsync/Chart.yaml version', chart.version],
    ['charts/envsync/Chart.yaml appVersion', chart.appVersion],
  ] as const;
  for (const [where, found] of versions) {
    if (found !== version)
      throw new Error(`${where} is ${String(found)}, the tag ${tag}: make them equal`);
  }
  const sections = files.changelog.split(/^(?=## \[)/m);
  const section = sections.find((s) => s.startsWith(`## [${version}]`));
  if (section === undefined) throw new Error(`CHANGELOG.md has no section ## [${version}]`);
  const [heading = '', ...body] = section.split('\n');
  if (!/ - \d{4}-\d{2}-\d{2}$/.test(heading))
    throw new Error(`CHANGELOG.md's "${heading}" has no release date: write "- YYYY-MM-DD"`);
  // The link definitions at the end of the file ([0.2.0]: https://...) are no part of a section.
  const notes = body
    .filter((line) => !/^\[[^\]]+\]: \S+$/.test(line))
    .join('\n')
    .trim();
  if (notes === '') throw new Error(`CHANGELOG.md's section for ${version} is empty`);
  return `${notes}\n`;
}

if (import.meta.main) {
  const [tag = ''] = process.argv.slice(2);
  const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
  try {
    process.stdout.write(
      releaseNotes(tag, {
        changelog: read('CHANGELOG.md'),
        packageJson: read('package.json'),
        chartYaml: read('charts/envsync/Chart.yaml'),
      }),
    );
  } catch (error) {
    process.stderr.write(`release-notes: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
