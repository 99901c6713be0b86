/** What the action runs, decided from its inputs and the event (pure). */
import { describe, expect, it } from 'vitest';
import * as decision from '../../scripts/action/decide.ts';

const { decide, noPlanMessage, readInputs, readPullRequest, splitArgs } = decision;

const REPO = 'acme/infra';
const event = (head: unknown) => ({ pull_request: { number: 3, head: { repo: head } } });

describe('reading the event', () => {
  it.each([
    ['the same repository', { full_name: REPO, fork: false }, false],
    ['a fork', { full_name: 'someone/infra', fork: true }, true],
    ['a deleted fork (no head repository)', null, true],
    // Pull requests between two branches of a fork run in the fork, with the fork's secrets.
    ['a branch of this repository, itself a fork', { full_name: REPO, fork: true }, false],
  ])('a pull request from %s: fromFork is %s', (_, head, fromFork) => {
    expect(readPullRequest('pull_request', event(head), REPO)).toEqual({ number: 3, fromFork });
  });

  it('is no pull request on other events', () => {
    expect(readPullRequest('push', { ref: 'refs/heads/main' }, REPO)).toBeUndefined();
    expect(readPullRequest('pull_request', undefined, REPO)).toBeUndefined();
  });
});

describe('reading the inputs', () => {
  it('defaults: plan, the default state file, a comment', () => {
    expect(readInputs({})).toEqual({
      command: 'plan',
      manifests: '',
      apiUrl: '',
      hasToken: false,
      state: '.envsync/state.json',
      planFile: '',
      args: [],
      comment: true,
      commentId: 'plan',
    });
  });

  it('a token comes from the input, ENVSYNC_TOKEN or ENVSYNC_TOKEN_FILE', () => {
    expect(readInputs({ INPUT_TOKEN: 'x' }).hasToken).toBe(true);
    expect(readInputs({ ENVSYNC_TOKEN: 'x' }).hasToken).toBe(true);
    expect(readInputs({ ENVSYNC_TOKEN_FILE: '/run/token' }).hasToken).toBe(true);
    expect(readInputs({ INPUT_TOKEN: '  ' }).hasToken).toBe(false);
  });

  it('a wrong input names the input and what it takes', () => {
    expect(() => readInputs({ INPUT_COMMAND: 'apply' })).toThrow(
      'input command: "apply" is not one of validate, plan, sync',
    );
    expect(() => readInputs({ INPUT_COMMENT: 'yes' })).toThrow(
      'input comment: "yes" is not true or',
    );
  });

  it('splits args as a shell splits plain words and quotes, with no expansion', () => {
    expect(splitArgs('--org acme\n--org  "big co"  --x \'$HOME\' ""')).toEqual([
      '--org',
      'acme',
      '--org',
      'big co',
      '--x',
      '$HOME',
      '',
    ]);
    expect(() => splitArgs('--org "acme')).toThrow('a " quote is not closed');
  });
});

describe('deciding what runs', () => {
  const inputs = readInputs({ INPUT_TOKEN: 't', INPUT_MANIFESTS: 'm', INPUT_API_URL: 'https://x' });
  const pr = { number: 3, fromFork: false };

  it('a plan on a pull request: plan with the state, detailed exit code, and a comment', () => {
    expect(decide({ ...inputs, planFile: 'plan.json' }, pr)).toEqual({
      mode: 'plan',
      args: [
        ...'plan --manifests m --api-url https://x --state .envsync/state.json'.split(' '),
        ...'--detailed-exitcode --out plan.json --output text'.split(' '),
      ],
      commentOn: 3,
      noPlan: undefined,
    });
  });

  it('a sync applies the plan file with --plan, and never comments', () => {
    const d = decide({ ...inputs, command: 'sync', planFile: 'plan.json' }, pr);
    expect(d.args.slice(0, 1)).toEqual(['sync']);
    expect(d.args).toContain('--plan');
    expect(d.commentOn).toBeUndefined();
  });

  it('a plan from a fork, or without a token, is validate only, with the extra args', () => {
    const fork = decide({ ...inputs, args: ['--org', 'a'] }, { number: 3, fromFork: true });
    expect(fork).toEqual({
      mode: 'validate-only',
      args: ['validate', '--manifests', 'm', '--output', 'text', '--org', 'a'],
      commentOn: undefined,
      noPlan: 'fork',
    });
    expect(decide({ ...inputs, hasToken: false }, pr).noPlan).toBe('no-token');
  });

  it('outside a pull request, a missing token is not hidden: the plan runs and envsync says what is missing', () => {
    expect(decide({ ...inputs, hasToken: false }, undefined).mode).toBe('plan');
  });

  it('the no-plan messages say why and what to do', () => {
    expect(noPlanMessage('fork').summary).toMatch(/from a fork.*no secrets/s);
    expect(noPlanMessage('fork').summary).toContain('pushes the branch to this repository');
    expect(noPlanMessage('no-token').log).toContain('secrets.ENVSYNC_TOKEN');
  });
});
