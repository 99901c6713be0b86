/**
 * What the GitHub Action does, decided from its inputs and the event: which envsync command runs
 * with which arguments, whether the plan is commented on the pull request, and, for a pull
 * request that gets no secrets, why it is validated only. Plain data in and out; no I/O.
 */

export const COMMANDS = ['validate', 'plan', 'sync'] as const;
export type Command = (typeof COMMANDS)[number];

/** The action's inputs, as action.yml hands them to the script (INPUT_* variables). */
export interface ActionInputs {
  readonly command: Command;
  /** Empty: envsync's own default (`manifests`, or ENVSYNC_MANIFESTS). */
  readonly manifests: string;
  /** Empty: ENVSYNC_API_URL, if the job sets it. */
  readonly apiUrl: string;
  /** Whether a token for the service reaches envsync (the input, ENVSYNC_TOKEN or ENVSYNC_TOKEN_FILE). */
  readonly hasToken: boolean;
  readonly state: string;
  /** plan: save the plan here (--out); sync: apply exactly this saved plan (--plan). */
  readonly planFile: string;
  readonly args: readonly string[];
  readonly comment: boolean;
  readonly commentId: string;
}

/** A wrong input: says which and what it takes. */
export class ActionInputError extends Error {
  override name = 'ActionInputError';
}

/**
 * Splits the `args` input into words as a shell would for plain words and quotes: spaces and
 * newlines separate, '...' and "..." keep spaces. No expansion of any kind.
 */
export function splitArgs(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const char of text) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else word = (word ?? '') + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      word ??= '';
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (quote !== undefined)
    throw new ActionInputError(
      `input args: a ${quote} quote is not closed in ${JSON.stringify(text)}`,
    );
  if (word !== undefined) words.push(word);
  return words;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const value = (env[`INPUT_${name}`] ?? '').trim();
  if (value === '') return fallback;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new ActionInputError(
    `input ${name.toLowerCase().replaceAll('_', '-')}: ${JSON.stringify(value)} is not true or false`,
  );
}

/** Reads the inputs from INPUT_* variables (action.yml sets them from `inputs`). */
export function readInputs(env: NodeJS.ProcessEnv): ActionInputs {
  const text = (name: string) => (env[`INPUT_${name}`] ?? '').trim();
  const command = text('COMMAND') || 'plan';
  if (!(COMMANDS as readonly string[]).includes(command))
    throw new ActionInputError(
      `input command: ${JSON.stringify(command)} is not one of ${COMMANDS.join(', ')}`,
    );
  return {
    command: command as Command,
    manifests: text('MANIFESTS'),
    apiUrl: text('API_URL'),
    hasToken: [env['INPUT_TOKEN'], env['ENVSYNC_TOKEN'], env['ENVSYNC_TOKEN_FILE']].some(
      (value) => (value ?? '').trim() !== '',
    ),
    state: text('STATE') || '.envsync/state.json',
    planFile: text('PLAN_FILE'),
    args: splitArgs(env['INPUT_ARGS'] ?? ''),
    comment: flag(env, 'COMMENT', true),
    commentId: text('COMMENT_ID') || 'plan',
  };
}

/** What the event says about a pull request, if the run is for one. */
export interface PullRequestFacts {
  readonly number: number;
  /** Its head is in another repository: GitHub gives its workflows no secrets. */
  readonly fromFork: boolean;
}

/** Reads the pull request from the event's name and payload (GITHUB_EVENT_PATH's JSON). */
export function readPullRequest(
  eventName: string,
  payload: unknown,
  repository: string,
): PullRequestFacts | undefined {
  if (eventName !== 'pull_request' && eventName !== 'pull_request_target') return undefined;
  const pr = (payload as { pull_request?: unknown } | undefined)?.pull_request as
    | { number?: unknown; head?: { repo?: { full_name?: unknown } | null } }
    | undefined;
  if (typeof pr?.number !== 'number') return undefined;
  const head = pr.head?.repo;
  // GitHub withholds secrets when the head is in another repository than the base (a deleted
  // fork has none). `head.repo.fork` alone would also be true for pull requests between two
  // branches of a fork, which do get the fork's secrets.
  const fromFork = head === null || head === undefined || head.full_name !== repository;
  return { number: pr.number, fromFork };
}

export type Mode = Command | 'validate-only';

export interface Decision {
  readonly mode: Mode;
  /** Arguments after `envsync` (the markdown report's file is added by the caller). */
  readonly args: readonly string[];
  /** Comment the plan on this pull request. */
  readonly commentOn: number | undefined;
  /** Why a plan was asked for and only validate runs. */
  readonly noPlan: 'fork' | 'no-token' | undefined;
}

/** Decides what runs. A plan for a pull request without secrets becomes a validate-only run. */
export function decide(inputs: ActionInputs, pr: PullRequestFacts | undefined): Decision {
  const noPlan =
    inputs.command === 'plan' && pr !== undefined
      ? pr.fromFork
        ? 'fork'
        : inputs.hasToken
          ? undefined
          : 'no-token'
      : undefined;
  const mode: Mode = noPlan === undefined ? inputs.command : 'validate-only';
  const manifests = inputs.manifests === '' ? [] : ['--manifests', inputs.manifests];
  const common = ['--output', 'text'];
  const args =
    mode === 'validate' || mode === 'validate-only'
      ? ['validate', ...manifests, ...common]
      : [
          mode,
          ...manifests,
          ...(inputs.apiUrl === '' ? [] : ['--api-url', inputs.apiUrl]),
          '--state',
          inputs.state,
          '--detailed-exitcode',
          ...(inputs.planFile === ''
            ? []
            : [mode === 'plan' ? '--out' : '--plan', inputs.planFile]),
          ...common,
        ];
  return {
    mode,
    args: [...args, ...inputs.args],
    commentOn: mode === 'plan' && inputs.comment ? pr?.number : undefined,
    noPlan,
  };
}

/** Why there is no plan, and what to do: for the log (one line) and the step summary. */
export function noPlanMessage(reason: 'fork' | 'no-token'): { log: string; summary: string } {
  const why =
    reason === 'fork'
      ? 'this pull request comes from a fork, and GitHub gives the workflows of pull requests from forks no secrets, so envsync has no token to read the service with'
      : 'no token for the service reached this job (the token input is empty: the secret is not set, or this pull request, like those Dependabot opens, gets no secrets)';
  const todo =
    reason === 'fork'
      ? 'The manifests are validated instead (below). To see the plan, a maintainer pushes the branch to this repository and opens the pull request from there; a change merged without a plan is applied by a sync of main.'
      : 'The manifests are validated instead (below). Store the service token as an Actions secret (for example ENVSYNC_TOKEN) and pass it as `token: ${{ secrets.ENVSYNC_TOKEN }}`; Dependabot reads Dependabot secrets, not Actions secrets.';
  return {
    log: `No plan: ${why}. ${todo}`,
    summary: `### envsync: validated only, no plan\n\nNo plan was made because ${why}.\n\n${todo}\n`,
  };
}
