// The /v1 routes of traces and evaluation rules, for the route table in rest.ts (which passes its
// `route` maker, so this file needs nothing from rest.ts).
import type { ToolDefinition } from '../tool.ts';
import { getTraceOperation, listTracesOperation } from './operations.ts';
import * as rules from './rules/operations.ts';

type Method = 'get' | 'post' | 'patch' | 'delete';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Operation = ToolDefinition<any, any, any>;

export function traceRoutes<R>(route: (method: Method, path: string, operation: Operation, status?: number) => R): R[] {
  return [
    route('get', '/v1/traces/', listTracesOperation),
    route('get', '/v1/traces/:trace_id/', getTraceOperation),
    route('get', '/v1/evaluation-rules/', rules.listEvaluationRulesOperation),
    route('post', '/v1/evaluation-rules/', rules.createEvaluationRuleOperation, 201),
    route('get', '/v1/evaluation-rules/:rule_id/', rules.getEvaluationRuleOperation),
    route('patch', '/v1/evaluation-rules/:rule_id/', rules.updateEvaluationRuleOperation),
    route('delete', '/v1/evaluation-rules/:rule_id/', rules.deleteEvaluationRuleOperation),
    route('post', '/v1/evaluation-rules/:rule_id/test/', rules.testEvaluationRuleOperation),
    route('post', '/v1/evaluation-rules/:rule_id/backfill/', rules.backfillEvaluationRuleOperation, 202),
  ];
}
