#!/usr/bin/env node
// The `tribunal` command. The project runs TypeScript directly through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
// `tribunal ... | head -1`: the reader closed the pipe; that is a normal end, not an error (issue 26).
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
