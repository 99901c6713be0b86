import { describe, expect, it } from 'vitest';
import {
  escapeCommandData,
  escapeCommandProperty,
  escapeText,
  escapeHtml,
  escapeJson,
  escapeMarkdown,
  markdownCode,
  neutraliseWorkflowCommands,
} from '../../src/core/escape.ts';

describe('escaping untrusted text', () => {
  it('shows control, C1, bidirectional and separator characters visibly', () => {
    expect(escapeText('a\nb\r\tc\u001b[31m\u0007\u007f\u009b\u202e\u2028\u2060\ufeffz')).toBe(
      'a\\nb\\r\\tc\\u001b[31m\\u0007\\u007f\\u009b\\u202e\\u2028\\u2060\\ufeffz',
    );
    expect(escapeText('plain ü 日本')).toBe('plain ü 日本');
  });

  it('keeps any line of an output from being a workflow command', () => {
    expect(
      neutraliseWorkflowCommands('ok\n::error::x\n   ::warning::y\na ::b\nz ##[error]q\n'),
    ).toBe('ok\n\\u003a:error::x\n   \\u003a:warning::y\na ::b\nz ##\\u005berror]q\n');
  });

  it("escapes workflow command data and properties as GitHub's toolkit does, and controls visibly", () => {
    expect(escapeCommandData('50%\r\n::error::x\u001b')).toBe('50%25%0D%0A::error::x\\u001b');
    expect(escapeCommandProperty('a:b,c')).toBe('a%3Ab%2Cc');
  });

  it('escapes HTML and markdown so that nothing is interpreted', () => {
    expect(escapeHtml(`<script>&"'`)).toBe('&lt;script&gt;&amp;&quot;&#39;');
    expect(escapeMarkdown('| [x](http://e) *b* _i_ `c` # <b> & \\')).toBe(
      '\\| [x]\\(http://e\\) \\*b\\* \\_i\\_ \\`c\\` \\# &lt;b&gt; &amp; \\\\',
    );
    expect(markdownCode('a|b<c>')).toBe('<code>a\\|b&lt;c&gt;</code>');
  });

  it('writes JSON with C1 and bidirectional characters as \\u escapes, the same data once parsed', () => {
    const value = { s: 'a\u009b\u202e\u2028b ##[error]x', n: 'line\nbreak' };
    const json = escapeJson(JSON.stringify(value, null, 2));
    expect(json).not.toMatch(/[\u0080-\u009f\u2028\u202e]/);
    expect(json).not.toContain('##[');
    expect(JSON.parse(json)).toEqual(value);
  });
});
