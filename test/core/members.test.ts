import { describe, expect, it } from 'vitest';
import { changeWaves, unknownMembers } from '../../src/core/plan.ts';
import { desired, observedFull } from '../helpers/builders.ts';

const logical = (name: string, members: string[]) =>
  desired(name, { type: 'logical', included_environments: members });

describe('unknownMembers', () => {
  it('accepts members the manifests declare or the listing shows', () => {
    const want = [desired('web'), logical('all', ['web', 'db'])];
    expect(unknownMembers(want, [observedFull('db')])).toEqual([]);
  });

  it('names each member neither has, with the environment and the field', () => {
    const want = [desired('web'), logical('all', ['web', 'db', 'cache']), logical('none', [])];
    expect(
      unknownMembers(want, [observedFull('cache')]).map((u) => [u.env.name, u.spec.name, u.member]),
    ).toEqual([['all', 'included_environments', 'db']]);
  });

  it('has nothing to say when no environment declares members', () => {
    expect(unknownMembers([desired('a')], [])).toEqual([]);
  });
});

describe('changeWaves', () => {
  const change = (env: ReturnType<typeof desired>) => ({ name: env.name, desired: env });
  it.each([
    ['no members: one wave', [desired('a'), desired('b')], [['a', 'b']]],
    [
      'members before the environment naming them',
      [logical('all', ['a', 'b']), desired('a'), desired('b')],
      [['a', 'b'], ['all']],
    ],
    [
      'a member not changed in this plan does not hold anything back',
      [logical('all', ['elsewhere']), desired('a')],
      [['all', 'a']],
    ],
    [
      'nested logical environments, layer by layer',
      [logical('top', ['mid']), logical('mid', ['a']), desired('a')],
      [['a'], ['mid'], ['top']],
    ],
    [
      'a cycle goes last, together',
      [logical('x', ['y']), logical('y', ['x']), desired('a')],
      [['a'], ['x', 'y']],
    ],
  ])('%s', (_title, envs, expected) => {
    expect(changeWaves(envs.map(change)).map((wave) => wave.map((c) => c.name))).toEqual(expected);
  });
});
