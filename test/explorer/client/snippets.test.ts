import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { compactJson, curlPost, pythonSnippet, rSnippet, shellQuote } from '../../../src/explorer/client/snippets.js';

const input = {
  origin: 'http://127.0.0.1:3000',
  dataSetId: '9eee125b-5538-49b8-aa49-4fda877b5e57',
  postUrl: 'http://127.0.0.1:3000/v1/data-sets/9eee125b-5538-49b8-aa49-4fda877b5e57/query',
  body: { criteria: { filters: { in: ["it's", 'true'] } }, indicators: ['a"b'], debug: false, page: 1, pageSize: 1000 },
};

describe('explorer code snippets', () => {
  it('quotes for the shell so that the shell passes the exact JSON on', () => {
    const line = curlPost(input);
    const args = execFileSync(
      'sh',
      ['-c', `set -- ${line.slice('curl '.length)}; for a in "$@"; do printf '%s\\n' "$a"; done`],
      { encoding: 'utf8' },
    )
      .trimEnd()
      .split('\n');
    expect(args).toEqual([
      '-sS',
      '-X',
      'POST',
      input.postUrl,
      '-H',
      'Content-Type: application/json',
      '-d',
      JSON.stringify(input.body),
    ]);
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });

  it('writes the POST body as a Python literal (True/False/None only outside strings)', () => {
    const code = pythonSnippet(input);
    expect(code).toContain('"debug": False');
    expect(code).toContain('"true"');
    expect(code).toContain(`requests.post(\n    "${input.postUrl}",`);
  });

  it('points eesyapi at this server and sends the same JSON with query_dataset', () => {
    const code = rSnippet(input);
    expect(code).toContain('utils::assignInNamespace("api_url"');
    expect(code).toContain('server <- "http://127.0.0.1:3000"');
    expect(code).toContain('sub("^https://[^/]+/api/v[0-9.]+/", paste0(server, "/v1/"), original(...))');
    expect(code).toContain(
      `query_dataset(\n  "${input.dataSetId}",\n  json_query = "${JSON.stringify(input.body).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"\n)`,
    );
    expect(rSnippet({ ...input, dataSetVersion: '2.0' })).toContain('"?dataSetVersion=2.0"');
  });

  it('keeps short objects on one line', () => {
    expect(compactJson({ a: [{ period: '2020/2021', code: 'AY' }], b: 1 })).toBe(
      '{"a":[{"period":"2020/2021","code":"AY"}],"b":1}',
    );
    expect(JSON.parse(compactJson(input.body, 2, 20))).toEqual(input.body);
    expect(compactJson(input.body, 2, 20).split('\n').length).toBeGreaterThan(3);
  });
});
