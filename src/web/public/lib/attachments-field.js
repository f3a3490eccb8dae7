// The attachments field of the try-it form (h-attach): a file picker for PDF, PNG, JPEG and WebP.
// On run, each chosen file is uploaded (POST /v1/files/, multipart) and the answered ids go into the
// run's `attachments`; the same file twice is one upload on the server (the id comes from the bytes).
import { api, ApiError } from './api.js';
import { h } from './dom.js';
import { field } from './ui.js';

const ACCEPT = 'application/pdf,image/png,image/jpeg,image/webp,.pdf,.png,.jpg,.jpeg,.webp';

export function attachmentsField() {
  const input = h('input', { type: 'file', multiple: true, accept: ACCEPT });
  const wrap = field(
    {
      label: 'Attachments',
      name: 'attachments',
      hint: 'Optional: images or PDFs (PNG, JPEG, WebP, PDF; at most 20 MB each) the judge model sees with the response.',
    },
    input,
  );
  return {
    fieldset: wrap,
    /** Uploads the chosen files and answers their ids (none chosen: an empty list). */
    async upload() {
      const ids = [];
      for (const file of input.files ?? []) {
        const form = new FormData();
        form.append('file', file, file.name);
        try {
          ids.push((await api('POST', '/v1/files/', { form })).id);
        } catch (thrown) {
          // The server's reason (wrong type, too large, quota), shown at the field with the file's name.
          const err = /** @type {ApiError} */ (thrown); // api() throws only ApiError
          const message = `${file.name}: ${err.message}`;
          throw new ApiError(err.status ?? 0, { detail: message, code: err.code, errors: [{ field: 'attachments', message }] });
        }
      }
      return ids;
    },
  };
}
