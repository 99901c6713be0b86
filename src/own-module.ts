/**
 * envsync's own modules are `.ts` files run directly in a checkout and `.js` files in the package
 * (dist/, built by scripts/build.ts). The compiler rewrites the paths of `import` statements, but
 * not a path given to `require`, which the lazily loaded modules use: this gives that path the
 * extension of the modules actually running.
 */
const RUNNING_SOURCES = import.meta.url.endsWith('.ts');

/** The path of one of envsync's own modules (written with `.ts`) as the running code names it. */
export function ownModule(path: `${string}.ts`): string {
  return RUNNING_SOURCES ? path : `${path.slice(0, -'.ts'.length)}.js`;
}
