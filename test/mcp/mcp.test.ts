import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { seedCatalogue } from '../../src/statistics/seed/service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/** The seeded weekly attendance data set: "Overall absence rate" by region, week by week. */
const WEEKLY = '14f4e111-506c-4bb9-86ff-6d4923acdd07';

interface Meta {
  dataSet: { id: string; title: string; version: string };
  filters: Array<{ id: string; label: string; options: Array<{ id: string; label: string }> }>;
  indicators: Array<{ id: string; label: string }>;
  geographicLevels: Array<{ code: string; label: string }>;
  timePeriods: Array<{ code: string; period: string; label: string }>;
}

let t: TestApp;
let base: string;
let client: Client;

beforeAll(async () => {
  t = await buildTestApp();
  await seedCatalogue(t.database, { dataSetIds: [WEEKLY] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
}, 120000);

afterAll(async () => {
  await client?.close();
  await t?.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe("the MCP endpoint, driven by the SDK's own client", () => {
  it('lists its read-only tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_data_set_metadata',
      'query_data_set',
      'search_data_sets',
      'search_publications',
    ]);
    for (const tool of tools) expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
  });

  it('finds the absence data set by a word of its title, reads its metadata and answers the highest overall absence rate by region in the latest period, as the API does', async () => {
    const search = await call('search_data_sets', { query: 'attendance' });
    expect(search.isError).toBeFalsy();
    const found = (search.structuredContent as { dataSets: Array<{ id: string; title: string }> }).dataSets;
    expect(found.map((d) => d.id)).toEqual([WEEKLY]);
    expect(textOf(search)).toContain(WEEKLY);

    const metaResult = await call('get_data_set_metadata', { dataSetId: WEEKLY });
    expect(metaResult.isError).toBeFalsy();
    const meta = metaResult.structuredContent as unknown as Meta;
    const overall = meta.indicators.find((i) => i.label === 'Overall absence rate')!;
    expect(overall).toBeDefined();
    expect(meta.geographicLevels.map((l) => l.code)).toContain('REG');
    const latest = meta.timePeriods.at(-1)!;
    const schoolType = meta.filters.find((f) => f.label === 'School Type')!;
    const total = schoolType.options.find((o) => o.label === 'Total')!;
    expect(textOf(metaResult)).toContain('Overall absence rate');

    const criteria = {
      and: [
        { geographicLevels: { eq: 'REG' } },
        { timePeriods: { eq: { period: latest.period, code: latest.code } } },
        { filters: { eq: total.id } },
      ],
    };
    const sorts = [{ field: `indicator|${overall.id}`, direction: 'Desc' }];
    const answer = await call('query_data_set', {
      dataSetId: WEEKLY,
      criteria,
      indicators: [overall.id],
      sorts,
      maxRows: 3,
    });
    expect(answer.isError, textOf(answer)).toBeFalsy();
    const table = answer.structuredContent as {
      totalResults: number;
      columns: string[];
      rows: string[][];
      source: { version: string; permalink: string; permalinkExact: boolean };
    };

    const api = await fetch(`${base}/v1/data-sets/${WEEKLY}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ criteria, indicators: [overall.id], sorts, labels: true }),
    });
    const page = (await api.json()) as {
      paging: { totalResults: number };
      results: Array<{ locations: Record<string, string>; values: Record<string, string> }>;
      labels: { locations: Record<string, string> };
    };
    const top = page.results[0]!;
    expect(table.totalResults).toBe(page.paging.totalResults);
    expect(table.totalResults).toBe(9);
    expect(table.rows).toHaveLength(3);
    const rate = table.columns.indexOf('Overall absence rate (%)');
    const region = table.columns.indexOf(meta.geographicLevels.find((l) => l.code === 'REG')!.label);
    expect(region).toBeGreaterThan(-1);
    expect(table.rows[0]![rate]).toBe(top.values[overall.id]);
    expect(table.rows[0]![region]).toBe(page.labels.locations[top.locations.REG!]);
    expect(textOf(answer)).toContain('Showing 3 of 9 matching row(s)');
    expect(textOf(answer)).toContain(`data set ${WEEKLY}, version 1.0`);

    // The permalink opens the same query in the explorer.
    expect(table.source.version).toBe('1.0');
    expect(table.source.permalinkExact).toBe(true);
    const permalink = new URL(table.source.permalink);
    expect(permalink.origin).toBe(base);
    expect(permalink.pathname).toBe(`/data-sets/${WEEKLY}/query`);
    expect(permalink.searchParams.get('geographicLevels.in')).toBe('REG');
    expect(permalink.searchParams.get('timePeriods.in')).toBe(`${latest.period}|${latest.code}`);
    expect(permalink.searchParams.get(`filters.${schoolType.id}`)).toBe(total.id);
    expect(permalink.searchParams.get('sorts')).toBe(`indicator|${overall.id}|Desc`);
    const opened = await fetch(permalink);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('answers bad tool input with a clear tool error, never a 500', async () => {
    const invalid = await call('query_data_set', { dataSetId: WEEKLY, criteria: { geographicLevels: { eq: 'NOPE' } } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid), textOf(invalid)).toMatch(/criteria\.geographicLevels\.eq: .*\(AllowedValue\)/);

    const unknown = await call('get_data_set_metadata', { dataSetId: 'not-a-uuid' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('404 Not Found');

    const missing = await call('query_data_set', { dataSetId: '00000000-0000-4000-8000-000000000000' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('404');

    const wrongType = await call('query_data_set', { dataSetId: WEEKLY, maxRows: 'ten' });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toMatch(/maxRows/);

    const tooMany = await call('query_data_set', { dataSetId: WEEKLY, maxRows: 1000 });
    expect(tooMany.isError).toBe(true);

    await expect(client.callTool({ name: 'delete_everything', arguments: {} })).resolves.toMatchObject({
      isError: true,
    });
  });

  it('refuses a GET (stateless: no event stream) and malformed JSON-RPC without a 500', async () => {
    const get = await fetch(`${base}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    const garbage = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"nope": true}',
    });
    expect(garbage.status).toBeGreaterThanOrEqual(400);
    expect(garbage.status).toBeLessThan(500);
    const notJson = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
  });

  it("counts its requests against the statistics API's rate limit", async () => {
    const limited = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) statuses.push((await limited.app.inject({ url: '/v1/publications' })).statusCode);
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      for (let i = 0; i < 2; i++)
        statuses.push((await limited.app.inject({ method: 'POST', url: '/mcp', headers, payload: body })).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});
