/**
 * Which Node runs envsync, checked before anything else loads. Plain JavaScript that any Node
 * from 18 on parses (no TypeScript, no newer syntax): the launcher (envsync.js) imports it first,
 * so an older Node prints one line saying what to install instead of a loader error about `.ts`
 * files or unknown syntax. The tests import it too.
 */

/** The Node major to install: the current LTS line, the one `.nvmrc` names. */
export const RECOMMENDED_NODE_MAJOR = 24;

/**
 * The lowest version a `package.json` `engines.node` of the form `>=MAJOR.MINOR[.PATCH]` allows.
 * @param {string} engines e.g. ">=22.22"
 * @returns {[number, number, number]}
 */
export function lowestNode(engines) {
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(engines.trim());
  if (match === null) {
    throw new Error(`engines.node is "${engines}": envsync's check reads only ">=MAJOR.MINOR"`);
  }
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

/**
 * The one line to print when Node `current` is older than `engines` allows, else undefined.
 * @param {string} current a Node version, as in `process.versions.node` ("20.19.0")
 * @param {string} engines package.json's `engines.node` (">=22.22")
 * @returns {string | undefined}
 */
export function nodeVersionProblem(current, engines) {
  const lowest = lowestNode(engines);
  const have = current
    .replace(/^v/, '')
    .split(/[.-]/)
    .slice(0, 3)
    .map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < 3; i += 1) {
    const a = have[i] ?? 0;
    const b = lowest[i] ?? 0;
    if (a > b) return undefined;
    if (a < b) {
      const needed = lowest[2] === 0 ? `${lowest[0]}.${lowest[1]}` : lowest.join('.');
      return (
        `envsync needs Node.js ${needed} or newer (this is ${current}): ` +
        `install Node.js ${RECOMMENDED_NODE_MAJOR} LTS, e.g. \`nvm install ${RECOMMENDED_NODE_MAJOR}\`, ` +
        `or from https://nodejs.org/`
      );
    }
  }
  return undefined;
}
