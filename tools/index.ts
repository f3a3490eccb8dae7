// The 14 tools, in the order of SPEC section 3. MCP registers them all; REST maps routes to them.
import createEvaluator from './create_evaluator.ts';
import createJudge from './create_judge.ts';
import generateJudge from './generate_judge.ts';
import getEvaluator from './get_evaluator.ts';
import getExecutionLog from './get_execution_log.ts';
import getJudge from './get_judge.ts';
import listEvaluators from './list_evaluators.ts';
import listExecutionLogs from './list_execution_logs.ts';
import listJudges from './list_judges.ts';
import listProjects from './list_projects.ts';
import runEvaluator from './run_evaluator.ts';
import runJudge from './run_judge.ts';
import updateEvaluator from './update_evaluator.ts';
import updateJudge from './update_judge.ts';

export const tools = {
  listJudges,
  getJudge,
  listEvaluators,
  getEvaluator,
  listProjects,
  runJudge,
  runEvaluator,
  generateJudge,
  createJudge,
  updateJudge,
  createEvaluator,
  updateEvaluator,
  listExecutionLogs,
  getExecutionLog,
};

export const allTools = Object.values(tools);
