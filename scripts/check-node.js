/**
 * The first step of `npm test`: the Node that npm runs the checkout's scripts with is new enough
 * to run TypeScript. Plain JavaScript that any Node from 18 on parses, so that an older one prints
 * what to do instead of Node's loader error about the `.ts` extension.
 *
 * npm puts node_modules/.bin first on a script's PATH, and the `node` dev dependency puts a
 * Node 24 there: on a machine whose own Node is older, the scripts run on that one. This check
 * fails only when it is missing, e.g. after `npm ci --ignore-scripts` (its binary comes with its
 * install script).
 */
import { readFileSync } from 'node:fs';
import { nodeVersionProblem } from '../bin/node-version.js';

/** @type {{ engines: { node: string } }} */
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const problem = nodeVersionProblem(process.versions.node, manifest.engines.node);
if (problem !== undefined) {
  process.stderr.write(
    `${problem}\n` +
      `In a checkout, npm runs the scripts with the Node 24 of the "node" dev dependency ` +
      `(node_modules/.bin/node), which is missing: run \`npm ci\` again, with its install scripts.\n`,
  );
  process.exitCode = 1;
}
