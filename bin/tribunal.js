#!/usr/bin/env node
// The `tribunal` command. The project runs TypeScript directly through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
