// POST /v1/judges/{judge_id}/refine/ with `stream: true` (h-proxy): the same operation as the REST
// route (src/operations/refine.ts), answered as server-sent events: an `iteration` event for every
// version as soon as it is judged, then one `result` event (or an `error` event in problem form).
// Mounted after the /v1 authentication and JSON body parser; without `stream: true` it steps aside.
import express, { type Request, type Response } from 'express';
import type { Caller } from '../auth.ts';
import { fromZodError } from '../errors.ts';
import { problemOf, sendProblem } from '../http/problem.ts';
import { enforceLimits } from '../limits.ts';
import { RefineInput, runRefine } from '../operations/refine.ts';
import type { Services } from '../tool.ts';

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

export function refineStreamRoute(services: Services): express.Router {
  const router = express.Router({ strict: false });
  router.post('/v1/judges/:judge_id/refine/', async (req: Request, res: Response, next) => {
    const body = req.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || body.stream !== true) return next();
    const ctx = Object.assign({ caller: res.locals.caller as Caller }, services); // not a spread then a field: see rest.ts
    const parsed = RefineInput.safeParse({ ...body, judge_id: req.params.judge_id });
    if (!parsed.success) return sendProblem(res, fromZodError(parsed.error, 'input to refine_response'));
    try {
      enforceLimits(parsed.data, services.config.limits);
    } catch (err) {
      return sendProblem(res, err);
    }
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      res.status(200).setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('cache-control', 'no-cache');
      res.flushHeaders();
    };
    try {
      const result = await runRefine(ctx, parsed.data, (it) => {
        start();
        res.write(event('iteration', it));
      });
      start();
      res.end(event('result', result));
    } catch (err) {
      // Before the first event the error is an ordinary problem; after it, the stream's last event.
      if (!started) return sendProblem(res, err);
      res.end(event('error', problemOf(err).toProblem()));
    }
  });
  return router;
}
