/**
 * Every relative link in the README, the changelog, docs/ and the examples' READMEs names a file
 * of the repository, and every #anchor a heading of its page (slugged as GitHub does); a link to
 * its own page names a heading.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  const examples = readdirSync(path.join(ROOT, 'examples'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('examples', f));
  return ['README.md', 'CHANGELOG.md', ...docs, ...examples].sort();
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');
}

/** The text outside fenced code blocks. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

function anchors(file: string): Set<string> {
  const found = new Set<string>();
  for (const line of prose(readFileSync(file, 'utf8')).split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading?.[1] !== undefined) found.add(slug(heading[1]));
  }
  return found;
}

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const match of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = match[1] ?? '';
    if (/^[a-z][a-z+.-]*:/i.test(link)) continue; // https:, mailto: ...
    const [target = '', anchor] = link.split('#');
    const resolved = target === '' ? file : path.resolve(path.dirname(file), target);
    if (!existsSync(resolved)) broken.push(`${link}: no such file`);
    else if (resolved === file && anchor === undefined) broken.push(`${link}: this very page`);
    else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor))
      broken.push(`${link}: no such heading`);
  }
  return broken;
}

describe('documentation links', () => {
  it.each(markdownFiles())('%s: every relative link and anchor resolves', (file) => {
    expect(brokenLinks(path.join(ROOT, file))).toEqual([]);
  });

  it('the check finds a missing file and a missing heading, and passes good links', async () => {
    expect(slug('Running as a daemon: `envsync run`')).toBe('running-as-a-daemon-envsync-run');
    const tmp = await tempDir();
    try {
      const page = tmp.path('page.md');
      writeFileSync(tmp.path('other.md'), '# Other\n\n## A heading\n');
      writeFileSync(
        page,
        '# Page\n\n[ok](other.md#a-heading) [ok](#page) [web](https://example.com/x)\n' +
          '[gone](missing.md) [bad](other.md#nope) [self](page.md) [ok](page.md#page)\n\n' +
          '```md\n[in code](ignored.md)\n```\n',
      );
      expect(brokenLinks(page)).toEqual([
        'missing.md: no such file',
        'other.md#nope: no such heading',
        'page.md: this very page',
      ]);
    } finally {
      await tmp.cleanup();
    }
  });
});
