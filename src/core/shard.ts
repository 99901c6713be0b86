import { hash53 } from './hash.ts';

/**
 * The shard (0..count-1) that owns `org`, by rendezvous hashing: the shard with the highest
 * hash(org, shard) wins, so going from N to N+1 shards moves only about 1/(N+1) of the orgs.
 */
export function shardOf(org: string, count: number): number {
  let best = 0;
  let bestWeight = -1;
  for (let shard = 0; shard < count; shard++) {
    const weight = hash53(`${shard}\u0000${org}`);
    if (weight > bestWeight) {
      best = shard;
      bestWeight = weight;
    }
  }
  return best;
}

/** Reads a StatefulSet pod's ordinal from its hostname (`envsync-2` -> 2). */
export function ordinalFromHostname(hostname: string): number | undefined {
  const match = /-(\d+)$/.exec(hostname.split('.')[0] ?? '');
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
