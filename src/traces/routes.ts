// The /v1 routes of traces and evaluation rules, for the route table in rest.ts (which passes its
// `route` maker, so this file needs nothing from rest.ts).
import type { ToolDefinition } from '../tool.ts';
import { getTraceOperation, listTracesOperation } from './operations.ts';

type Method = 'get' | 'post' | 'patch' | 'delete';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Operation = ToolDefinition<any, any, any>;

export function traceRoutes<R>(route: (method: Method, path: string, operation: Operation, status?: number) => R): R[] {
  return [
    route('get', '/v1/traces/', listTracesOperation),
    route('get', '/v1/traces/:trace_id/', getTraceOperation),
  ];
}
