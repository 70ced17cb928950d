// Builds one of the repository's packages (client, kits) into its `dist/` for `npm pack`:
// `node scripts/build-package.mjs <package dir>`, run by each package's `prepack`.
//
// The sources import the repository's own folders (`shared/`, and for the client the route table in
// `src/http/`), so the compiler's root is the repository: `dist/` mirrors it (`dist/client/`,
// `dist/shared/`, `dist/src/http/routes/`…) and every relative import stays inside the tarball.
// One source of truth, no code moved. Sibling packages are imported by name and resolve to their
// built `dist/` (the build sets no `@exec-inbox/source` condition), so those are built first.
// The build only emits (`noCheck`): `npm run typecheck` checks the same sources.
// Node's ESM resolver wants file extensions that the sources leave out (they are resolved as a
// bundler would); the emitted relative specifiers get theirs here.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const TSC = join(ROOT, "node_modules/.bin/tsc");

function workspaceDirs() {
  const { workspaces } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const byName = new Map();
  for (const dir of workspaces) {
    const { name } = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"));
    byName.set(name, join(ROOT, dir));
  }
  return byName;
}

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"']*)\2/g;

/** `./x` → `./x.js` or `./x/index.js`, whichever the build emitted; anything else as it is. */
function withExtension(file, specifier, emitted) {
  if (/\.(m?js|json)$/.test(specifier)) return specifier;
  const base = resolve(dirname(file), specifier);
  if (existsSync(`${base}${emitted}`)) return `${specifier}.js`;
  if (existsSync(join(base, `index${emitted}`))) return `${specifier}/index.js`;
  throw new Error(`${file}: cannot resolve ${specifier} in the build`);
}

function addExtensions(dir) {
  for (const entry of readdirSync(dir)) {
    const file = join(dir, entry);
    if (statSync(file).isDirectory()) {
      addExtensions(file);
      continue;
    }
    const emitted = file.endsWith(".d.ts") ? ".d.ts" : file.endsWith(".js") ? ".js" : undefined;
    if (emitted === undefined) continue;
    const text = readFileSync(file, "utf8");
    const fixed = text.replace(
      SPECIFIER,
      (_, lead, quote, spec) => `${lead}${quote}${withExtension(file, spec, emitted)}${quote}`,
    );
    if (fixed !== text) writeFileSync(file, fixed);
  }
}

/** The newest mtime of the TypeScript sources a package build can read. */
function newestSource(dir = ROOT, newest = 0) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (["node_modules", "dist", "test", "bench", ".git", ".wrangler"].includes(entry.name))
      continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = newestSource(path, newest);
    else if (entry.name.endsWith(".ts") || entry.name === "package.json")
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** A sibling's dist/ stands if no source changed since it was built (packing several at once). */
function fresh(dir) {
  const stamp = join(dir, "dist/.built");
  return existsSync(stamp) && statSync(stamp).mtimeMs > newestSource();
}

function build(dir, packages, built, isTarget) {
  if (built.has(dir)) return;
  built.add(dir);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    const sibling = packages.get(dependency);
    if (sibling !== undefined) build(sibling, packages, built, false);
  }
  if (!isTarget && fresh(dir)) return;
  rmSync(join(dir, "dist"), { recursive: true, force: true });
  execFileSync(TSC, ["-p", join(dir, "tsconfig.build.json")], { stdio: "inherit" });
  addExtensions(join(dir, "dist"));
  writeFileSync(join(dir, "dist/.built"), `${manifest.name}\n`);
}

const target = process.argv[2];
if (target === undefined) {
  console.error("usage: node scripts/build-package.mjs <package dir>");
  process.exit(2);
}
build(resolve(target), workspaceDirs(), new Set(), true);
