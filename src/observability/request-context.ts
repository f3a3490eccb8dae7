// The request an async call chain belongs to, so a model call deep in the engine can be logged and
// traced under its request without the engine knowing about HTTP. Our own AsyncLocalStorage, not
// OpenTelemetry's global context manager: tests build many servers in one process.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Span } from '@opentelemetry/api';

export interface RequestContext {
  requestId: string;
  /** The request's span when tracing is on. */
  span?: Span;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();
