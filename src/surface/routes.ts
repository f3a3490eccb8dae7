// The door of judges as files (SPEC section 16): export answers YAML (application/yaml) or JSON
// (?format=json), import reads a YAML or JSON body. Not JSON-only, so these routes sit before the
// JSON body parser (server.ts), like the dataset streams; the work is in files.ts and import.ts.
import express, { type Request, type Response } from 'express';
import type { Caller } from '../auth.ts';
import { getVisibleEvaluator } from '../domain/evaluators.ts';
import { getVisibleJudge, loadJudgeEvaluators } from '../domain/judges.ts';
import { TribunalError, validationError } from '../errors.ts';
import { bodyTooLarge } from '../http/body.ts';
import { sendProblem } from '../http/problem.ts';
import type { Services } from '../tool.ts';
import { evaluatorDocument, judgeDocument, parseDocument, serialize } from './files.ts';
import { importDocument } from './import.ts';

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

function checkQuery(req: Request, allowed: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.query)) {
    if (!allowed.includes(key)) throw validationError(`Unknown query parameter ${key}; this route takes ${allowed.join(', ')}.`, [{ field: key, message: 'unknown parameter' }]);
    out[key] = String(Array.isArray(value) ? value[value.length - 1] : value);
  }
  return out;
}

function formatOf(query: Record<string, string>): 'yaml' | 'json' {
  const format = query.format ?? 'yaml';
  if (format !== 'yaml' && format !== 'json') throw validationError('format is yaml (the default) or json.', [{ field: 'format', message: 'yaml or json' }]);
  return format;
}

function send(res: Response, body: unknown, format: 'yaml' | 'json', filename: string) {
  res.status(200).type(format === 'json' ? 'application/json' : 'application/yaml');
  res.setHeader('Content-Disposition', `attachment; filename="${filename.replace(/[^\w.-]+/g, '_')}.${format === 'json' ? 'json' : 'yaml'}"`);
  res.send(serialize(body, format));
}

export function judgeFileRoutes(services: Services): express.Router {
  const router = express.Router({ strict: false });
  // Object.assign, not a spread then caller: that form gets a map of its own per request on Node 20.
  const ctxOf = (res: Response) => Object.assign({ caller: res.locals.caller as Caller }, services);
  const text = express.text({ type: [...YAML_TYPES, 'application/json'], limit: services.config.limits.bodyBytes });

  router.get('/v1/judges/:judge_id/export/', async (req, res) => {
    try {
      const format = formatOf(checkQuery(req, ['format']));
      const ctx = ctxOf(res);
      const judge = await getVisibleJudge(ctx, String(req.params.judge_id));
      send(res, judgeDocument(judge, await loadJudgeEvaluators(ctx, judge)), format, judge.name);
    } catch (err) {
      sendProblem(res, err);
    }
  });

  router.get('/v1/evaluators/:evaluator_id/export/', async (req, res) => {
    try {
      const format = formatOf(checkQuery(req, ['format']));
      const evaluator = await getVisibleEvaluator(ctxOf(res), String(req.params.evaluator_id));
      send(res, evaluatorDocument(evaluator), format, evaluator.name);
    } catch (err) {
      sendProblem(res, err);
    }
  });

  router.post(
    '/v1/judges/import/',
    (req, res, next) => {
      if (!req.is([...YAML_TYPES, 'application/json'])) {
        return sendProblem(res, new TribunalError('validation_error', 415, 'Send the judge file as Content-Type: application/yaml or application/json.'));
      }
      text(req, res, (err?: unknown) => {
        if (err) return sendProblem(res, (err as { type?: string }).type === 'entity.too.large' ? bodyTooLarge(services.config.limits.bodyBytes) : err);
        next();
      });
    },
    async (req, res) => {
      try {
        const query = checkQuery(req, ['dry_run', 'project_id']);
        if (query.dry_run !== undefined && !['true', 'false'].includes(query.dry_run))
          throw validationError('dry_run is true or false.', [{ field: 'dry_run', message: 'true or false' }]);
        const body = typeof req.body === 'string' ? req.body : '';
        if (!body.trim()) throw validationError('The body is empty: send the judge file (as written by the export).', [{ field: '(body)', message: 'empty' }]);
        const doc = parseDocument(body, req.is('application/json') ? 'json' : 'yaml');
        res.status(200).json(await importDocument(ctxOf(res), doc, { dry_run: query.dry_run === 'true', project_id: query.project_id }));
      } catch (err) {
        sendProblem(res, err);
      }
    },
  );
  return router;
}

/** The OpenAPI entries of these routes (their bodies are not JSON-only, so they are not in rest.ts's table). */
export function judgeFileOpenApi(problem: (description: string) => unknown): Record<string, Record<string, unknown>> {
  const security = [{ ApiKey: [] }, { Bearer: [] }];
  const text = { schema: { type: 'string' } };
  const common = {
    '401': problem('not_authenticated'),
    '429': problem('rate_limited'),
    '500': problem('internal_error'),
    '503': problem('store_unavailable: the store is unreachable; retry shortly'),
  };
  const format = { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['yaml', 'json'] }, description: 'yaml (default) or json' };
  const exported = (what: string, param: string) => ({
    get: {
      summary: `Export ${what} as a file (YAML or JSON)`,
      operationId: `get_v1_${what.split(' ')[1]}s_export`,
      security,
      parameters: [{ name: param, in: 'path', required: true, schema: { type: 'string' }, description: `id or exact name of the ${what.split(' ')[1]}` }, format],
      responses: {
        '200': { description: 'the document', content: { 'application/yaml': text, 'application/json': { schema: { type: 'object' } } } },
        '400': problem('validation_error'),
        '404': problem('not_found'),
        ...common,
      },
    },
  });
  return {
    '/v1/judges/{judge_id}/export/': exported('a judge', 'judge_id'),
    '/v1/evaluators/{evaluator_id}/export/': exported('an evaluator', 'evaluator_id'),
    '/v1/judges/import/': {
      post: {
        summary: 'Import a judge or evaluator document (evaluators matched by name or created; idempotent)',
        operationId: 'post_v1_judges_import',
        security,
        parameters: [
          { name: 'dry_run', in: 'query', required: false, schema: { type: 'boolean' }, description: 'answer what would change without changing it' },
          { name: 'project_id', in: 'query', required: false, schema: { type: 'string' }, description: 'project for what is created' },
        ],
        requestBody: { required: true, content: { 'application/yaml': text, 'application/json': { schema: { type: 'object' } } } },
        responses: {
          '200': {
            description: '{dry_run, judge_id, evaluator_id, created, updated, unchanged}; updated items list their changes {field, from, to}',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    dry_run: { type: 'boolean' },
                    judge_id: { type: ['string', 'null'] },
                    evaluator_id: { type: ['string', 'null'] },
                    created: { type: 'array' },
                    updated: { type: 'array' },
                    unchanged: { type: 'array' },
                  },
                },
              },
            },
          },
          '400': problem('validation_error: errors lists the path of each bad field'),
          '403': problem("permission_denied: a name matches another organization's evaluator or judge you cannot edit"),
          '409': problem('conflict'),
          '413': problem('payload_too_large'),
          ...common,
          '415': problem('send application/yaml or application/json'),
        },
      },
    },
  };
}
