// tribunal files upload|list|delete: attachments (SPEC section 16). An uploaded file's id goes to
// `--attach <file_id>` on `tribunal judges run` and `tribunal evaluators run`.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { num, runGroup, str, type Command } from './command.ts';
import { EXIT, usageError } from './errors.ts';
import { day, printJson, printNextPage, printTable } from './output.ts';
import { oneRequestCommand, type Group } from './shared.ts';
import type { FileObject } from '../schemas/files.ts'; // the wire type, from the zod schema (one source of truth)

/** The server's limit, checked here too so that a huge file is never read into memory. */
const MAX_BYTES = 20 * 1024 * 1024;

/** One file as multipart/form-data, in a field named `file`. */
function multipart(name: string, data: Buffer): { data: Buffer; type: string } {
  const boundary = `tribunal-${randomBytes(12).toString('hex')}`;
  const safeName = name.replace(/["\r\n\\]/g, '_');
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeName}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return { data: Buffer.concat([Buffer.from(head), data, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

const upload: Command = {
  summary: 'upload files (PDF, PNG, JPEG, WebP; at most 20 MB each) to attach to runs',
  help: `Usage: tribunal files upload <path> [<path> ...]

Prints each file's id; pass it as --attach <file_id> to tribunal judges run or evaluators run.
The same bytes give the same id, so uploading a file twice stores it once.`,
  positionals: [1, 100],
  async run({ positionals, json, client }) {
    const out: FileObject[] = [];
    for (const file of positionals) {
      let size: number;
      try {
        size = fs.statSync(file).size;
      } catch (err) {
        throw usageError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
      }
      if (size > MAX_BYTES) throw usageError(`${file} is ${size} bytes, over the 20 MB limit of an attachment.`);
      const stored = await client().request<FileObject>('POST', '/v1/files/', { raw: multipart(path.basename(file), fs.readFileSync(file)) });
      out.push(stored);
      if (!json) console.log(`${stored.id}  ${stored.content_type}  ${stored.bytes} bytes  ${file}`);
    }
    if (json) printJson(out.length === 1 ? out[0] : out);
    return EXIT.ok;
  },
};

const list_: Command = {
  summary: "list your organization's files",
  help: 'Usage: tribunal files list [--limit N] [--cursor C]',
  options: { limit: { type: 'string' }, cursor: { type: 'string' } },
  async run({ values, json, client }) {
    const page = await client().get('/v1/files/', { limit: num(values.limit, 'limit', { min: 1, integer: true }), cursor: str(values.cursor) });
    if (json) printJson(page);
    else {
      printTable(
        ['ID', 'NAME', 'TYPE', 'BYTES', 'CREATED'],
        page.results.map((f: FileObject) => [f.id, f.name, f.content_type, f.bytes, day(f.created_at)]),
      );
      printNextPage(page.next_cursor, 'tribunal files list');
    }
    return EXIT.ok;
  },
};

const delete_ = oneRequestCommand(
  'delete a file',
  'Usage: tribunal files delete <file_id>',
  (api, id) => api.delete(`/v1/files/${encodeURIComponent(id)}/`),
  (_answer, id) => console.log(`Deleted file ${id}.`),
);

const fileCommands: Group = { upload, list: list_, delete: delete_ };

export function files(argv: string[]): Promise<number> {
  return runGroup('files', 'Attachments: images and PDFs given to the judge model with a run (docs/SURFACE.md).', fileCommands, argv);
}
