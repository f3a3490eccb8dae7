// How the user reaches the `tribunal` command, so that every hint we print is one they can paste:
// `tribunal ...` once it is installed (npm install -g . or npm link from the checkout put a
// `tribunal` link on PATH), `npx tribunal ...` when they ran it through npx inside the checkout
// (outside it, npx would fetch an unrelated package of that name from the registry).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/tribunal.js', import.meta.url));

export interface Invocation {
  env: NodeJS.ProcessEnv;
  /** process.argv[1]: the script node was started with (a bin link keeps its own name). */
  script: string | undefined;
  /** Whether a `tribunal` on PATH leads to this checkout's bin/tribunal.js. */
  installed: () => boolean;
}

/** A `tribunal` executable on PATH that is this checkout's command (npm install -g . / npm link). */
export function installedOnPath(env: NodeJS.ProcessEnv = process.env): boolean {
  let target: string;
  try {
    target = fs.realpathSync(BIN);
  } catch {
    return false;
  }
  const names = process.platform === 'win32' ? ['tribunal.cmd', 'tribunal'] : ['tribunal'];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      try {
        if (fs.realpathSync(path.join(dir, name)) === target) return true;
      } catch {
        // not there
      }
    }
  }
  return false;
}

/** The command to print in hints: "tribunal" or "npx tribunal". */
export function commandName(inv: Invocation = { env: process.env, script: process.argv[1], installed: () => installedOnPath() }): string {
  // npx / npm exec set npm_command=exec for the command they run.
  if (inv.env.npm_command === 'exec') return 'npx tribunal';
  const script = path.basename(inv.script ?? '');
  // Through the installed link (its name is the command's), or bin/tribunal.js run directly by
  // node (a developer in the checkout, where the docs use the installed name).
  if (/^tribunal(\.cmd|\.ps1)?$/i.test(script) || script === 'tribunal.js') return 'tribunal';
  // Anything else is the server started from the checkout (npm start): the installed name when
  // there is one, else npx, which works inside the checkout.
  return inv.installed() ? 'tribunal' : 'npx tribunal';
}

let cached: string | undefined;

/** Rewrites `tribunal <command>` in a hint to the way this process was started. */
export function withCommandName(text: string, name: string = (cached ??= commandName())): string {
  if (name === 'tribunal') return text;
  return text.replace(/(^|[\s"'`(])tribunal (?=[a-z-])/gm, `$1${name} `);
}
