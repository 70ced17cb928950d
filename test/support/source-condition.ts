// In this repository the packages (the client and the kits) resolve to their TypeScript sources
// under the export condition "@exec-inbox/source" (each package.json's "exports"); an installed
// tarball resolves to its built dist/ instead. tsc and Vite are told so in their configs; a child
// process is told with these.
export const SOURCE_CONDITION = "@exec-inbox/source";

/** Node's (and tsx's) flag. */
export const NODE_SOURCE_FLAG = `--conditions=${SOURCE_CONDITION}`;

/** wrangler's bundler: its default conditions (workerd, worker, browser), the sources' first. */
export const WRANGLER_SOURCE_ENV = {
  WRANGLER_BUILD_CONDITIONS: `${SOURCE_CONDITION},workerd,worker,browser`,
};
