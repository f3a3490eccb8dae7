// The request an async call chain belongs to, so a model call deep in the engine can be traced (and
// logged) under its request without the engine knowing about HTTP. Entered only when tracing is on
// (see http.ts for the cost). Our own AsyncLocalStorage, not
// OpenTelemetry's global context manager: tests build many servers in one process.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Span } from '@opentelemetry/api';

export interface RequestContext {
  requestId: string;
  span: Span;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();
