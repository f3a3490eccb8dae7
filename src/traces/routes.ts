// The /v1 routes of traces and evaluation rules, for the route table in rest.ts (which passes its
// `route` and `resource` makers, so this file needs nothing from rest.ts).
import type { ToolDefinition } from '../tool.ts';
import { resourceOperations, type ResourceOperations } from '../operations/resource-operations.ts';
import { getTraceOperation, listTracesOperation } from './operations.ts';
import * as rules from './rules/operations.ts';

type Method = 'get' | 'post' | 'patch' | 'delete';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Operation = ToolDefinition<any, any, any>;

export function traceRoutes<R>(
  route: (method: Method, path: string, operation: Operation, status?: number) => R,
  resource: (collection: string, id: string, operations: ResourceOperations) => R[],
): R[] {
  return [
    route('get', '/v1/traces/', listTracesOperation),
    route('get', '/v1/traces/:trace_id/', getTraceOperation),
    ...resource('/v1/evaluation-rules/', 'rule_id', resourceOperations(rules, 'EvaluationRule', 'Operation')),
    route('post', '/v1/evaluation-rules/:rule_id/test/', rules.testEvaluationRuleOperation),
    route('post', '/v1/evaluation-rules/:rule_id/backfill/', rules.backfillEvaluationRuleOperation, 202),
  ];
}
