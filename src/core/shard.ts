/**
 * Rendezvous (highest random weight) hashing: each org goes to the shard with the highest
 * hash(org, shard). Going from N to N+1 shards moves only the orgs the new shard wins: about
 * 1/(N+1) of them.
 */

/** cyrb53: a fast, well-mixed 53-bit string hash (public domain). */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The shard (0..count-1) that owns `org`. */
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
