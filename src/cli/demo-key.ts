// tribunal demo-key: POST /create-demo-user/ and print the lines to export.
import { runCommand, type Command } from './command.ts';
import { EXIT } from './errors.ts';
import { printJson } from './output.ts';

const demoKeyCommand: Command = {
  summary: 'get a temporary demo API key from the server',
  help: `Usage: tribunal demo-key [--url <url>]

Asks the server for a demo organization with a temporary key (no key needed) and prints the
lines to export. Try:  eval "$(tribunal demo-key)"   (the human text goes to stderr).`,
  async run({ json, client }) {
    const c = client();
    const made = await c.post<{ api_key: string; expires_at: string; organization_id: string; project_id: string }>('/create-demo-user/', undefined, { auth: false });
    if (json) {
      printJson({ ...made, url: c.url });
      return EXIT.ok;
    }
    process.stderr.write(`Demo organization ${made.organization_id}; the key expires ${made.expires_at}. Resources made with it are public.\n`);
    // stdout holds only shell lines, so that eval "$(tribunal demo-key)" works.
    console.log(`export TRIBUNAL_URL=${c.url}`);
    console.log(`export TRIBUNAL_API_KEY=${made.api_key}`);
    return EXIT.ok;
  },
};

export const demoKey = (argv: string[]) => runCommand('demo-key', demoKeyCommand, argv);
