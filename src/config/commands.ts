/**
 * envsync's commands as the help and the docs describe them; `cli.ts` maps each to its module.
 */

export const COMMAND_NAMES = [
  'validate',
  'plan',
  'sync',
  'run',
  'export',
  'schema',
  'emulator',
] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];

/** The commands a setting names often, for the settings table. */
export const ONE_SHOT = ['validate', 'plan', 'sync'] as const;
export const RECONCILING = ['plan', 'sync', 'run'] as const;
export const API = ['plan', 'sync', 'run', 'export'] as const;
export const SETTING_COMMANDS = ['validate', 'plan', 'sync', 'run', 'export'] as const;
/** validate takes plan's API flags, unused, so one command line or wrapper serves both. */
export const VALIDATE = ['validate'] as const;

/** What the help says about a command, besides its flags. */
export interface CommandInfo {
  /** One line, for `envsync --help`. */
  readonly summary: string;
  /** The usage line, starting with `envsync`. */
  readonly synopsis: string;
  /** A paragraph (or a few, separated by blank lines) under the usage line. */
  readonly description: string;
  readonly examples: readonly string[];
  /** Closing lines: exit codes, signals. */
  readonly notes?: string;
}

const PRECEDENCE = 'Precedence: flags > environment > config file > defaults.';
const PLAN_EXIT_CODES = `Exit codes: 0 success; 1 error (invalid manifests, failed org or change, not converged);
            2 changes pending (only with --detailed-exitcode, plan or sync --dry-run).`;

/** Each command's help, besides its flags (those come from the settings table). */
export const COMMANDS: Readonly<Record<CommandName, CommandInfo>> = {
  validate: {
    summary: 'validate the manifests (offline, no token)',
    synopsis: 'envsync validate [flags] [PATH...]',
    description:
      'Reads and validates every manifest, offline (no token, no request). With PATHs, only those files (each read as a manifest, whatever its name) and folders (walked like --manifests); the checks across files of one org run over what is given.',
    examples: [
      'envsync validate --manifests manifests',
      'envsync validate manifests/acme.yaml manifests/beta/',
      'envsync validate --output json --annotations github',
    ],
    notes: `${PRECEDENCE}\nExit codes: 0 every selected manifest is valid; 1 a problem, or a usage or configuration error.`,
  },
  plan: {
    summary: 'show what sync would change (never writes)',
    synopsis: 'envsync plan [flags]',
    description:
      'Shows what sync would change. The same as "envsync sync --dry-run": it never writes to the API.',
    examples: [
      'envsync plan --manifests manifests --api-url https://app.example.com --detailed-exitcode',
      'envsync plan --out plan.json --output markdown > plan.md',
    ],
    notes: `${PRECEDENCE}\n${PLAN_EXIT_CODES}`,
  },
  sync: {
    summary: 'make the service match the manifests (--dry-run: plan only)',
    synopsis: 'envsync sync [--dry-run | --plan FILE] [flags]',
    description:
      'Plans, applies (PUT with retries), verifies and records every org of the manifests.',
    examples: [
      'envsync sync --manifests manifests --api-url https://app.example.com --output markdown',
      'envsync sync --plan plan.json',
    ],
    notes: `${PRECEDENCE}\n${PLAN_EXIT_CODES}`,
  },
  run: {
    summary: 'keep the service in step with the manifests, continuously',
    synopsis: 'envsync run [flags]',
    description:
      "Runs the long-running reconciler: watches the manifests (and git-sync's symlink swaps), resyncs on an interval, serves /healthz /readyz /metrics /status and POST /reconcile.",
    examples: [
      'envsync run --manifests /git/repo/manifests --api-url https://app.example.com --token-file /var/run/secrets/envsync/token',
      'envsync run --manifests examples/manifests --emulator',
    ],
    notes: `${PRECEDENCE}\nSignals: SIGHUP starts a pass; SIGTERM/SIGINT stop gracefully (exit 0).`,
  },
  export: {
    summary: "write orgs' environments, as the API lists them, as manifests",
    synopsis: 'envsync export --org ORG [--org ORG...] [--out DIR] [--force] [flags]',
    description:
      'Writes each org\'s environments, as the API lists them, as a manifest that "envsync validate" accepts: a way in for teams whose environments already exist. A round trip (export, then plan) shows nothing to create or update. At least one --org is required.',
    examples: [
      'envsync export --org acme --org globex --out manifests --api-url https://app.example.com',
    ],
    notes: `${PRECEDENCE}\nExit codes: 0 every org exported; 1 an org failed, or a usage or configuration error.`,
  },
  schema: {
    summary: 'print the JSON Schema of a manifest (for editors)',
    synopsis: 'envsync schema',
    description:
      'Prints the JSON Schema (draft 2020-12) of a manifest document, generated from the schema the validator uses. Save it and point your editor at it, e.g. with a first line\n  # yaml-language-server: $schema=./manifest.schema.json',
    examples: ['envsync schema > manifest.schema.json'],
  },
  emulator: {
    summary: 'run a local emulator of the Environments API',
    synopsis: 'envsync emulator [flags]',
    description:
      'Runs a local emulator of the Environments API. Its first line on stdout is "listening on http://HOST:PORT"; logs go to stderr. SIGTERM or SIGINT stop it gracefully (a second signal stops it at once).',
    examples: [
      'envsync emulator --org acme --token dev-token',
      'envsync emulator --port 0 --fail-rate 0.2 --latency 10-50 --seed 42',
    ],
  },
};
