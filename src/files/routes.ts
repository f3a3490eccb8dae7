// The upload door of attachments: POST /v1/files/ takes multipart/form-data with one file field
// named `file`. The body is counted as it streams in and refused (413) the moment it passes the
// largest file plus room for the multipart framing, before anything is parsed or stored; the exact
// 20 MB check is on the file's own bytes. The multipart parser is the platform's own (undici's
// Response.formData in Node 20), so no dependency is added. Mounted after authentication and rate
// limits and before the JSON body parser (server.ts). The other file routes are in the route table.
import express, { type Request, type Response } from 'express';
import type { Caller } from '../auth.ts';
import { TribunalError, validationError } from '../errors.ts';
import { sendProblem } from '../http/problem.ts';
import type { Services } from '../tool.ts';
import { createFile, fileTooLarge, MAX_FILE_BYTES } from './files.ts';

/** Multipart framing and the part headers: far less than this in any honest upload. */
const FRAMING_BYTES = 64 * 1024;
/** Text fields a client may send beside the file and that are ignored (OpenAI's SDKs send `purpose`). */
const IGNORED_FIELDS = new Set(['purpose']);

/** The body, read while counting; a 413 as soon as it is over `max` (the rest is read and dropped, so the client sees the answer). */
function readBounded(req: Request, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length'] ?? 0) > max) {
      req.resume();
      return reject(fileTooLarge());
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        chunks.length = 0;
        req.resume();
        reject(fileTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function theFile(req: Request): Promise<File> {
  const body = await readBounded(req, MAX_FILE_BYTES + FRAMING_BYTES);
  let form: FormData;
  try {
    form = await new globalThis.Response(new Blob([new Uint8Array(body)]), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
  } catch (err) {
    throw validationError(`The multipart body could not be read (${(err as Error).message}); send multipart/form-data with the file in a field named file.`, [
      { field: '(body)', message: 'malformed multipart/form-data' },
    ]);
  }
  const files: File[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      if (IGNORED_FIELDS.has(name)) continue;
      throw validationError(`Unknown form field ${name}: send only the file, in a field named file.`, [{ field: name, message: 'unknown field' }]);
    }
    if (name !== 'file') throw validationError(`The file is in a field named ${name}; name the field file.`, [{ field: name, message: 'the file field is named file' }]);
    files.push(value);
  }
  if (files.length !== 1) {
    throw validationError(files.length ? 'Send one file per upload.' : 'No file in the form: send the file in a field named file (curl -F file=@picture.png).', [
      { field: 'file', message: files.length ? 'one file per upload' : 'required' },
    ]);
  }
  return files[0];
}

export function fileUploadRoute(services: Services): express.Router {
  const router = express.Router({ strict: false });
  router.post('/v1/files/', async (req: Request, res: Response) => {
    try {
      if (!req.is('multipart/form-data')) {
        throw new TribunalError('validation_error', 415, 'Send the file as multipart/form-data with the file in a field named file (curl -F file=@picture.png).');
      }
      const file = await theFile(req);
      if (file.size > MAX_FILE_BYTES) throw fileTooLarge();
      // Object.assign, not a spread then caller: that form gets a map of its own per request on Node 20.
      const ctx = Object.assign({ caller: res.locals.caller as Caller }, services);
      const { file: stored, created } = await createFile(ctx, file.name, Buffer.from(await file.arrayBuffer()));
      res.status(created ? 201 : 200).json(stored);
    } catch (err) {
      sendProblem(res, err);
    }
  });
  return router;
}

/** The upload in the OpenAPI document (the route is outside the route table). */
export function fileUploadOpenApi(problem: (description: string) => unknown): Record<string, unknown> {
  const file = {
    type: 'object',
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      content_type: { type: 'string', enum: ['application/pdf', 'image/png', 'image/jpeg', 'image/webp'] },
      bytes: { type: 'integer' },
      sha256: { type: 'string' },
      created_at: { type: 'string' },
    },
    required: ['id', 'name', 'content_type', 'bytes', 'sha256', 'created_at'],
  };
  const answer = (description: string) => ({ description, content: { 'application/json': { schema: file } } });
  return {
    '/v1/files/': {
      post: {
        summary: 'Upload an attachment (PDF, PNG, JPEG or WebP, at most 20 MB; the same bytes answer the same id)',
        operationId: 'post_v1_files',
        security: [{ ApiKey: [] }, { Bearer: [] }],
        requestBody: {
          required: true,
          content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } }, required: ['file'] } } },
        },
        responses: {
          '201': answer('stored'),
          '200': answer('these bytes were stored already: the same file'),
          '400': problem('validation_error: an empty file, no file field, a malformed form'),
          '401': problem('not_authenticated'),
          '413': problem('payload_too_large: over 20 MB, or over the organization quota (limit: files or file_bytes)'),
          '415': problem('validation_error: not multipart/form-data, or the bytes are not a PDF, PNG, JPEG or WebP file'),
          '429': problem('rate_limited'),
          '500': problem('internal_error'),
          '503': problem('store_unavailable'),
        },
      },
    },
  };
}
