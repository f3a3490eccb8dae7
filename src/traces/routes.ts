// The /v1 routes of traces and evaluation rules, for the route table in rest.ts (which passes its
// `route` and `resource` makers, so this file needs nothing from rest.ts).
import type { ToolDefinition } from '../tool.ts';
import { getTraceOperation, listTracesOperation } from './operations.ts';
import * as rules from './rules/operations.ts';

type Method = 'get' | 'post' | 'patch' | 'delete';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Operation = ToolDefinition<any, any, any>;

/** The five definitions of a resource's routes (list, create, read, update, delete). */
export interface ResourceOperations<O = Operation> {
  list: O;
  create: O;
  get: O;
  update: O;
  remove: O;
}

export function traceRoutes<R>(
  route: (method: Method, path: string, operation: Operation, status?: number) => R,
  resource: (collection: string, id: string, operations: ResourceOperations) => R[],
): R[] {
  return [
    route('get', '/v1/traces/', listTracesOperation),
    route('get', '/v1/traces/:trace_id/', getTraceOperation),
    ...resource('/v1/evaluation-rules/', 'rule_id', {
      list: rules.listEvaluationRulesOperation,
      create: rules.createEvaluationRuleOperation,
      get: rules.getEvaluationRuleOperation,
      update: rules.updateEvaluationRuleOperation,
      remove: rules.deleteEvaluationRuleOperation,
    }),
    route('post', '/v1/evaluation-rules/:rule_id/test/', rules.testEvaluationRuleOperation),
    route('post', '/v1/evaluation-rules/:rule_id/backfill/', rules.backfillEvaluationRuleOperation, 202),
  ];
}
