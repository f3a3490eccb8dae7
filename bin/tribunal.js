#!/usr/bin/env node
// The `tribunal` command. The project runs TypeScript without a build step; bin/cli-bundle.mjs
// loads src/cli.ts from a bundle it keeps in step with the sources (or through tsx), see there why.
import { loadCli } from './cli-bundle.mjs';

// `tribunal ... | head -1`: the reader closed the pipe; that is a normal end, not an error (issue 26).
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});
const { main } = await loadCli();
process.exitCode = await main(process.argv.slice(2));
