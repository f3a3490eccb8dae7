// REST-only operations on attachments (SPEC section 16; src/files/). The upload itself is multipart,
// so it has its own door (src/files/routes.ts); these read and delete. Never MCP.
import { z } from 'zod';
import { pageQuery, toPage } from '../domain/pagination.ts';
import { deleteFile, fileToWire, getFile, listFiles } from '../files/files.ts';
import { page, PageParams } from '../schemas.ts';
import { FileObject } from '../schemas/files.ts';
import { defineTool } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';
import { Deleted } from './resources.ts';

const fileId = z.string().min(1).max(100).describe('id of a file of your organization (file_...)');

export const listFilesOperation = defineTool({
  name: 'list_files',
  title: "List your organization's attachments",
  description: 'Files uploaded with POST /v1/files/, newest first.',
  input: z.object({ ...PageParams }),
  output: page(FileObject),
  annotations: READ,
  handler: async (input, ctx) => toPage(await listFiles(ctx, pageQuery(input, ctx.config.limits.pageSize)), fileToWire),
});

export const getFileOperation = defineTool({
  name: 'get_file',
  title: "An attachment's metadata",
  description: 'One file of your organization: name, sniffed content type, size and SHA-256.',
  input: z.object({ file_id: fileId }),
  output: FileObject,
  annotations: READ,
  handler: ({ file_id }, ctx) => getFile(ctx, file_id),
});

export const deleteFileOperation = defineTool({
  name: 'delete_file',
  title: 'Delete an attachment',
  description: 'Deletes the file and its bytes. Execution logs that named it keep its id.',
  input: z.object({ file_id: fileId }),
  output: Deleted,
  annotations: { ...WRITE, idempotentHint: true },
  handler: async ({ file_id }, ctx) => {
    await deleteFile(ctx, file_id);
    return { deleted: true as const, id: file_id };
  },
});
