/**
 * The GitHub Action's step (action.yml runs it with `node`): runs envsync's validate, plan or
 * sync, puts the markdown report in the step summary, sets the step's outputs, and on a pull
 * request writes or updates the one plan comment. A pull request without secrets is validated
 * only, and the log and the summary say why. Exits 1 when envsync does (an error) or when the
 * comment cannot be written; a plan with changes pending (envsync's exit 2) is a success.
 */
import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commentBody, commentMarker } from './comment-body.ts';
import { decide, noPlanMessage, readInputs, readPullRequest } from './decide.ts';
import { upsertComment } from './github.ts';

const ENVSYNC = fileURLToPath(new URL('../../bin/envsync.js', import.meta.url));

/** Appends `name=value` lines to $GITHUB_OUTPUT (the values here are single lines). */
async function setOutputs(env: NodeJS.ProcessEnv, outputs: Record<string, string>): Promise<void> {
  const file = env['GITHUB_OUTPUT'];
  const lines = Object.entries(outputs).map(([name, value]) => `${name}=${value}\n`);
  if (file) await appendFile(file, lines.join(''));
}

async function appendStepSummary(env: NodeJS.ProcessEnv, markdown: string): Promise<void> {
  const file = env['GITHUB_STEP_SUMMARY'];
  if (file) await appendFile(file, markdown.endsWith('\n') ? `${markdown}\n` : `${markdown}\n\n`);
}

/** A workflow command's message: GitHub reads %, CR and LF in it as escapes. */
function commandText(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** Runs envsync with the job's environment, its output going to the log. Resolves its exit code. */
function runEnvsync(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENVSYNC, ...args], { env, stdio: 'inherit' });
    child.once('error', reject);
    child.once('close', (code) => resolve(code ?? 1));
  });
}

async function readEvent(env: NodeJS.ProcessEnv): Promise<unknown> {
  const file = env['GITHUB_EVENT_PATH'];
  if (!file) return undefined;
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch (error) {
    throw new Error(
      `GITHUB_EVENT_PATH ${file}: cannot read the event (${(error as Error).message})`,
      { cause: error },
    );
  }
}

async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const inputs = readInputs(env);
  const repository = env['GITHUB_REPOSITORY'] ?? '';
  const pr = readPullRequest(env['GITHUB_EVENT_NAME'] ?? '', await readEvent(env), repository);
  const decision = decide(inputs, pr);
  const marker = commentMarker(inputs.commentId);

  if (decision.noPlan !== undefined) {
    const message = noPlanMessage(decision.noPlan);
    process.stdout.write(`::notice title=envsync%3A no plan::${commandText(message.log)}\n`);
    await appendStepSummary(env, message.summary);
  }

  // envsync gets the job's environment, with the service token from the input if one is given,
  // and without the GitHub token or the action's inputs, which are not its business.
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env))
    if (!name.startsWith('INPUT_') && name !== 'GITHUB_TOKEN') childEnv[name] = value;
  const token = (env['INPUT_TOKEN'] ?? '').trim();
  if (token !== '' && decision.mode !== 'validate-only') childEnv['ENVSYNC_TOKEN'] = token;
  if (decision.mode === 'validate-only') {
    delete childEnv['ENVSYNC_TOKEN'];
    delete childEnv['ENVSYNC_TOKEN_FILE'];
  }

  const dir = await mkdtemp(path.join(env['RUNNER_TEMP'] || tmpdir(), 'envsync-action-'));
  const report = path.join(dir, 'report.md');
  const args = [...decision.args, '--summary-file', report];
  process.stdout.write(`envsync ${args.join(' ')}\n`);
  const exitCode = await runEnvsync(args, childEnv);
  const markdown = await readFile(report, 'utf8').catch(() => '');
  const command = decision.mode === 'validate-only' ? 'validate' : decision.mode;
  await appendStepSummary(
    env,
    markdown.trim() === ''
      ? `### envsync ${command} failed\n\nenvsync exited with code ${exitCode} before it produced a report: the log says why.\n`
      : markdown,
  );

  const outputs: Record<string, string> = {
    'exit-code': String(exitCode),
    'changes-pending': String(exitCode === 2),
    mode: decision.mode,
    report,
    'plan-file': inputs.planFile,
    'comment-url': '',
  };

  let failed = exitCode !== 0 && exitCode !== 2;
  if (decision.commentOn !== undefined) {
    const runUrl = `${env['GITHUB_SERVER_URL'] ?? 'https://github.com'}/${repository}/actions/runs/${env['GITHUB_RUN_ID'] ?? ''}`;
    const body = commentBody({
      marker,
      report: markdown,
      command,
      exitCode,
      runUrl,
      sha: env['GITHUB_SHA'] ?? '',
    });
    try {
      const comment = await upsertComment(
        {
          baseUrl: env['GITHUB_API_URL'] || 'https://api.github.com',
          token: env['GITHUB_TOKEN'] ?? '',
        },
        repository,
        decision.commentOn,
        marker,
        body,
      );
      outputs['comment-url'] = comment.url;
      process.stdout.write(`envsync: ${comment.action} the plan comment ${comment.url}\n`);
    } catch (error) {
      failed = true;
      const message = `the plan comment on pull request #${decision.commentOn} was not written: ${(error as Error).message}`;
      process.stdout.write(`::error title=envsync%3A comment::${commandText(message)}\n`);
      await appendStepSummary(env, `> [!CAUTION]\n> ${message}\n`);
    }
  }
  await setOutputs(env, outputs);
  return failed ? 1 : 0;
}

try {
  process.exitCode = await main(process.env);
} catch (error) {
  process.stdout.write(`::error title=envsync action::${commandText((error as Error).message)}\n`);
  process.exitCode = 1;
}
