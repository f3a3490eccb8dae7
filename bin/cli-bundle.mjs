// How bin/tribunal.js loads the CLI (issue 33). The project runs TypeScript without a build step,
// through tsx; but tsx's loader (a hooks thread every module passes through, esbuild behind it) costs
// a command about 0.5 s of CPU before it does anything, more than `tribunal eval` then spends on a
// thousand rows. So the first run bundles src/cli.ts with esbuild (tsx's own dependency; the
// commands stay separate chunks, loaded on first use as before) into .cache/cli/, and later runs
// import that bundle for as long as every source file it was built from is unchanged (size and
// mtime, checked on every start: about 2 ms). An edit to any of them means a new bundle on the next
// run, so a fresh clone and a working tree both behave as if the sources ran directly. Should
// anything here fail (no esbuild, a read-only install), the command runs through tsx as before;
// TRIBUNAL_CLI_BUNDLE=false asks for tsx outright.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Built bundles kept besides the current one (a long-running `tribunal serve` may still load chunks of its own). */
const KEEP = 3;
const KEEP_YOUNGER_MS = 3_600_000;
/** Bumped when the way bundles are built changes: older ones are then rebuilt. */
const FORMAT = 3;
/**
 * Packages built into the bundle rather than imported from node_modules at run time. zod is spread
 * over some hundred small ES modules: importing it from node_modules costs a command like `tribunal
 * eval` (whose rows are checked with the server's schemas) 100-200 ms of resolving, compiling and
 * linking them one by one, about a third of that once they are one file. Their files count as inputs
 * like ours (an upgrade rebuilds). zod keeps working beside another copy of itself (the MCP SDK's, in
 * `tribunal serve`): its registry and config live on globalThis and its instanceof checks traits.
 */
const INLINE = /^(zod|csv-parse)(\/|$)/;

/**
 * zod's `locales` namespace (the error messages in some sixty languages, which zod's index exports
 * as `z.locales` for `z.config()`) stands for about half of its code, read and compiled by every
 * command that checks input (issue 33: 370 KB of a 755 KB chunk). The project never switches zod's
 * language, so in the bundle that namespace holds English only; zod itself loads English (the
 * default) directly, not through it.
 */
const ZOD_LOCALES = /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;

/** The CLI's module (src/cli.ts): from the bundle when it can be had, else through tsx. */
export async function loadCli() {
  if (process.env.TRIBUNAL_CLI_BUNDLE !== 'false') {
    let entry;
    try {
      entry = await bundledCli(ROOT);
    } catch (err) {
      debug('cannot use the CLI bundle, running through tsx', err);
    }
    // Outside the try: once the bundle is chosen, an error while loading it is the command's own
    // (running its modules a second time through tsx would repeat their side effects).
    if (entry) return import(pathToFileURL(entry).href);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(path.join(ROOT, 'src', 'cli.ts')).href);
}

/** The path of an up-to-date bundle of `root`/src/cli.ts, built first when there is none. */
export async function bundledCli(root) {
  const where = { root, cache: path.join(root, '.cache', 'cli') };
  return freshBundle(where) ?? (await buildBundle(where));
}

function debug(message, err) {
  if (process.env.TRIBUNAL_DEBUG) console.error(`[tribunal] ${message}: ${err?.stack ?? err}`);
}

/** The stamp of one source file: a change to its size, mtime or inode (replaced by rename) makes the bundle stale. */
function stamp(file) {
  const st = fs.statSync(file);
  return `${st.size}:${st.mtimeMs}:${st.ino}`;
}

/** The bundle's entry when the manifest's every input is as it was at build time, else undefined. */
function freshBundle({ root, cache }) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(cache, 'manifest.json'), 'utf8'));
  } catch {
    return undefined; // never built here
  }
  if (manifest.format !== FORMAT || manifest.node !== process.version || !Array.isArray(manifest.inputs)) return undefined;
  // Every input is stat'ed on every start (about 390 files). The path is joined by hand (path.join
  // normalizing each one cost about a third of the check); a relative path that climbs out of the
  // root ('..') still goes through path.join, so that it resolves as it was recorded.
  const base = root.endsWith(path.sep) ? root : root + path.sep;
  for (const [file, was] of manifest.inputs) {
    try {
      if (stamp(file.includes('..') ? path.join(root, file) : base + file) !== was) return undefined;
    } catch {
      return undefined; // deleted or moved
    }
  }
  const entry = path.join(cache, manifest.dir, 'cli.mjs');
  return fs.existsSync(entry) ? entry : undefined;
}

/**
 * esbuild's onLoad for our .ts files. It stamps each file before reading it (a file edited during
 * the build then reads as changed on the next start), and turns `import.meta.url` into the source
 * file's own URL, so the files that find data beside them (presets, migrations, the check sandbox's
 * worker, package.json) find it from the bundle as they do from the sources.
 */
function sourcePlugin(root, stamps) {
  return {
    name: 'tribunal-sources',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
        stamps.set(path.relative(root, args.path), stamp(args.path));
        let contents = await fs.promises.readFile(args.path, 'utf8');
        if (contents.includes('import.meta.url')) contents = contents.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
        return { contents, loader: 'ts' };
      });
    },
  };
}

/**
 * A file of an installed package -> that package's package.json, which stands for all its files
 * (an install or upgrade rewrites it): one stat at start-up instead of one per file.
 */
function packageManifest(file) {
  const m = /^(.*[\\/]node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(file);
  return m ? path.join(m[1], 'package.json') : undefined;
}

/** Every package but the INLINE ones stays external: resolved from node_modules at run time, as with tsx. */
function externalPackages() {
  return {
    name: 'tribunal-external-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => (INLINE.test(args.path) ? undefined : { path: args.path, external: true }));
    },
  };
}

/** zod's locales index -> a module that exports the English one only (see ZOD_LOCALES). */
function englishOnlyZod() {
  return {
    name: 'tribunal-zod-english',
    setup(build) {
      build.onLoad({ filter: ZOD_LOCALES }, (args) => ({
        contents: 'export { default as en } from "./en.js";\n',
        resolveDir: path.dirname(args.path),
        loader: 'js',
      }));
    },
  };
}

/** Builds a new bundle into its own directory, then points the manifest at it (both by rename). */
async function buildBundle({ root, cache }) {
  const { build } = await import('esbuild');
  fs.mkdirSync(cache, { recursive: true });
  const dir = `b-${Date.now().toString(36)}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`;
  const tmp = path.join(cache, `${dir}.tmp`);
  // The settings esbuild reads count as inputs too.
  const stamps = new Map(['tsconfig.json', 'package.json'].filter((f) => fs.existsSync(path.join(root, f))).map((f) => [f, stamp(path.join(root, f))]));
  try {
    const result = await build({
      entryPoints: { cli: path.join(root, 'src', 'cli.ts') },
      outdir: tmp,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true, // each command's modules in their own chunks, loaded when the command runs
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node}`,
      metafile: true,
      logLevel: 'silent',
      plugins: [externalPackages(), sourcePlugin(root, stamps), englishOnlyZod()],
    });
    for (const file of Object.keys(result.metafile.inputs)) {
      const rel = path.relative(root, packageManifest(path.resolve(file)) ?? path.resolve(file));
      if (!stamps.has(rel)) stamps.set(rel, stamp(path.join(root, rel)));
    }
    fs.renameSync(tmp, path.join(cache, dir));
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  const manifest = path.join(cache, 'manifest.json');
  fs.writeFileSync(`${manifest}.${dir}`, JSON.stringify({ format: FORMAT, node: process.version, dir, inputs: [...stamps] }));
  fs.renameSync(`${manifest}.${dir}`, manifest);
  prune(cache, dir);
  return path.join(cache, dir, 'cli.mjs');
}

/** Removes old bundles: all but the newest few, and never one younger than an hour. */
function prune(cache, current) {
  try {
    const now = Date.now();
    const old = fs
      .readdirSync(cache, { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name !== current)
      .map((d) => ({ name: d.name, mtime: fs.statSync(path.join(cache, d.name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const [i, d] of old.entries()) {
      if (i >= KEEP && now - d.mtime > KEEP_YOUNGER_MS) fs.rmSync(path.join(cache, d.name), { recursive: true, force: true });
    }
  } catch (err) {
    debug('cannot prune old CLI bundles', err);
  }
}
