// The two dataset routes whose bodies are not JSON: POST .../items/import/ reads JSONL or CSV as a
// stream (no body-size limit: it is never held whole), GET .../items/export/ writes JSONL as a
// stream. Mounted after authentication and rate limits and before the JSON body parser (server.ts).
// A door (issue 25): the import, export and quota rules it calls are the datasets room's.
import { once } from 'node:events';
import express, { type Request, type Response } from 'express';
import type { Caller } from '../auth.ts';
import { TribunalError } from '../errors.ts';
import { sendProblem } from './problem.ts';
import type { Services } from '../tool.ts';
import { getOwnDataset, itemToWire } from '../datasets/datasets.ts';
import { csvRecords, importItems, jsonlLines } from '../datasets/import.ts';
import { importOverQuota, itemAllowance } from '../quotas/quotas.ts';

const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/json-lines', 'application/x-jsonlines'];
const EXPORT_PAGE = 500;

export function datasetStreamRoutes(services: Services): express.Router {
  const router = express.Router({ strict: false });
  const ctxOf = (res: Response) => Object.assign({ caller: res.locals.caller as Caller }, services); // not a spread then a field: see rest.ts

  router.post('/v1/datasets/:dataset_id/items/import/', async (req: Request, res: Response) => {
    try {
      const kind = req.is([...JSONL_TYPES, 'text/csv']);
      if (!kind) {
        throw new TribunalError(
          'validation_error',
          415,
          'Send the file as Content-Type: application/x-ndjson (JSON Lines, one item per line) or text/csv (a header row, then one item per row).',
        );
      }
      const dataset = await getOwnDataset(ctxOf(res), String(req.params.dataset_id));
      const { limits } = services.config;
      const parsers = kind === 'text/csv' ? csvRecords(limits.bodyBytes) : [jsonlLines(limits.bodyBytes)];
      // h-harden: the item quota, before the body is read and as it is stored.
      const ctx = ctxOf(res);
      const max = await itemAllowance(ctx);
      res.status(201).json(await importItems(services.store, dataset.id, req, parsers, limits, { max, error: (created) => importOverQuota(ctx, created) }));
    } catch (err) {
      sendProblem(res, err);
    }
  });

  router.get('/v1/datasets/:dataset_id/items/export/', async (req: Request, res: Response) => {
    let started = false;
    try {
      const dataset = await getOwnDataset(ctxOf(res), String(req.params.dataset_id));
      res.status(200).type('application/x-ndjson');
      res.setHeader('Content-Disposition', `attachment; filename="${dataset.id}.jsonl"`);
      started = true;
      let after: number | undefined;
      do {
        const page = await services.store.listDatasetItems(dataset.id, { limit: EXPORT_PAGE, after });
        const text = page.items.map((item) => `${JSON.stringify(itemToWire(item))}\n`).join('');
        // Wait for the client to take what it has before reading the next page.
        if (text && !res.write(text)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        after = page.last;
      } while (after !== undefined && !res.destroyed);
      res.end();
    } catch (err) {
      // Once lines went out the status cannot change: cut the stream so the client sees it is incomplete.
      if (started) res.destroy(err as Error);
      else sendProblem(res, err);
    }
  });
  return router;
}

/** The OpenAPI entries of these two routes (they are outside the JSON route table). */
export function datasetStreamOpenApi(problem: (description: string) => unknown): Record<string, Record<string, unknown>> {
  const security = [{ ApiKey: [] }, { Bearer: [] }];
  const parameters = [{ name: 'dataset_id', in: 'path', required: true, schema: { type: 'string' }, description: 'id or exact name of the dataset' }];
  const text = { schema: { type: 'string' } };
  const common = {
    '401': problem('not_authenticated'),
    '404': problem('not_found: no such dataset in your organization'),
    '429': problem('rate_limited'),
    '500': problem('internal_error'),
    '503': problem('store_unavailable: the store is unreachable; retry shortly'),
  };
  return {
    '/v1/datasets/{dataset_id}/items/import/': {
      post: {
        summary: 'Import items from a JSONL or CSV file, streamed (any size; bad lines skipped and reported by number)',
        operationId: 'post_v1_datasets_dataset_id_items_import',
        security,
        parameters,
        requestBody: { required: true, content: { 'application/x-ndjson': text, 'text/csv': text } },
        responses: {
          '201': {
            description: 'Imported',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    created: { type: 'integer' },
                    skipped: { type: 'array', items: { type: 'object', properties: { line: { type: 'integer' }, error: { type: 'string' } }, required: ['line', 'error'] } },
                    skipped_count: { type: 'integer', description: 'all skipped lines; `skipped` lists the first 1000' },
                  },
                  required: ['created', 'skipped', 'skipped_count'],
                },
              },
            },
          },
          '400': problem('validation_error: a CSV header with unknown columns or without response'),
          ...common,
          '415': problem('send application/x-ndjson or text/csv'),
        },
      },
    },
    '/v1/datasets/{dataset_id}/items/export/': {
      get: {
        summary: 'Every item of the dataset as JSONL, streamed in insertion order',
        operationId: 'get_v1_datasets_dataset_id_items_export',
        security,
        parameters,
        responses: { '200': { description: 'JSONL, one item per line', content: { 'application/x-ndjson': text } }, '400': problem('validation_error'), ...common },
      },
    },
  };
}
