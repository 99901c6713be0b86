/**
 * envsync's own modules are `.ts` files run directly in a checkout and `.js` files in the package
 * (dist/, bundled by scripts/build.ts). The bundler rewrites `import` statements, but not a path
 * given to `require`, which the lazily loaded modules use: this gives that path the extension of
 * the modules actually running. In the package every chunk sits at dist/'s root, and the build
 * makes each module named here an entry of its own there, `dist/NAME.js`: so name it as a sibling
 * (`./NAME.ts`), and give no two such modules the same file name (the build refuses).
 */
const RUNNING_SOURCES = import.meta.url.endsWith('.ts');

/** The path of one of envsync's own modules (written with `.ts`) as the running code names it. */
export function ownModule(path: `${string}.ts`): string {
  return RUNNING_SOURCES ? path : `${path.slice(0, -'.ts'.length)}.js`;
}
