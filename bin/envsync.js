#!/usr/bin/env -S node --max-semi-space-size=8
/**
 * The `envsync` command, installed or in a checkout. Plain JavaScript that any Node from 18 on
 * parses: it checks the Node version first (node-version.js), then runs the compiled CLI (dist/,
 * what the package ships) or, in a checkout with no build, the TypeScript sources directly.
 */
import { existsSync, readFileSync } from 'node:fs';
import { nodeVersionProblem } from './node-version.js';

/** @type {{ engines: { node: string } }} */
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const problem = nodeVersionProblem(process.versions.node, manifest.engines.node);
if (problem === undefined) {
  const built = new URL('../dist/cli.js', import.meta.url);
  await import(existsSync(built) ? built.href : new URL('../src/cli.ts', import.meta.url).href);
} else {
  process.stderr.write(`${problem}\n`);
  process.exitCode = 1;
}
