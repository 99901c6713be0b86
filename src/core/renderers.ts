import { escapeJson, neutraliseWorkflowCommands } from './escape.ts';
import { renderMarkdown } from './render-markdown.ts';
import { renderText } from './render-text.ts';
import type { RunReport } from './report.ts';
import {
  validationJson,
  validationMarkdown,
  type ValidationReport,
  validationText,
} from './validation.ts';

/** One output format: how it prints a run (plan, sync) and a validation. */
interface Renderer {
  run(report: RunReport, options: { readonly color: boolean }): string;
  validation(report: ValidationReport, options: { readonly color: boolean }): string;
}

const FORMATS = {
  text: {
    run: renderText,
    validation: (report) => neutraliseWorkflowCommands(validationText(report)),
  },
  json: {
    run: (report) => escapeJson(`${JSON.stringify(report, null, 2)}\n`),
    validation: (report) => escapeJson(validationJson(report)),
  },
  markdown: {
    run: (report) => neutraliseWorkflowCommands(renderMarkdown(report)),
    validation: (report) => neutraliseWorkflowCommands(validationMarkdown(report)),
  },
} satisfies Record<string, Renderer>;

type OutputFormat = keyof typeof FORMATS;

/** Every `--output` format: the flag's values and its help come from these keys. */
export const RENDERERS: Readonly<Record<OutputFormat, Renderer>> = FORMATS;

/** The formats, in the order help and errors list them. */
export const OUTPUT_FORMATS = Object.keys(RENDERERS) as [OutputFormat, ...OutputFormat[]];
