/**
 * docs/guides.md as a new user follows it: "Your first trainee in five minutes" and "Follow changes" run their `sh`
 * blocks, as written, with bash against a fresh server on a loopback port (the demo provider made as `npm start`
 * makes it; webhooks to a receiver on this machine allowed as the guide's step says); "From R with httr2 and
 * jsonlite" runs with Rscript (Debian's r-base-core, r-cran-httr2, r-cran-jsonlite: .ci/run installs them), as does
 * the explorer's httr2 snippet; "From R" shows the explorer's recipe for pointing eesyapi at the server, and the
 * requests its GET and POST queries make answer the row counts the guide states, with time periods in the only form
 * eesyapi lets through (eesyapi itself installs only from GitHub, so it is not run).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoProviderIfEmpty, DEMO_PROVIDER } from '../../src/register/startup.js';
import { tokenSecret } from '../../src/register/tokens.js';
import { REGISTER_EXAMPLES } from '../../src/register/openapi/examples.js';
import { R_AS_ROWS, rHttr2Snippet, rUseServer } from '../../src/explorer/client/snippets.js';
import { EXAMPLE_DATA_SET_ID } from '../../src/statistics/openapi-examples.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken } from '../register/helpers.js';

const run = promisify(execFile);
const GUIDE = 'docs/guides.md';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The text of a `## ` section of the guide. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`## ${heading}\n`);
  expect(start, `${GUIDE} has "## ${heading}"`).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

function fencedBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)\\n```', 'g'))].map((m) => m[1]!);
}

let t: TestApp;
let base: string;
let guide: string;
beforeAll(async () => {
  // As "Follow changes" step 4 starts the server, for a receiver on this machine.
  t = await buildTestApp({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_POLL_MS: '200' });
  // What the first `npm start` on the embedded database does.
  await createDemoProviderIfEmpty(t.database.db, t.config.REGISTER_ENVIRONMENT, tokenSecret(t.config));
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  guide = await readFile(GUIDE, 'utf8');
});
afterAll(async () => {
  await t?.close();
});

describe('Your first trainee in five minutes', () => {
  it('runs as written: token, create, list, update with If-Match, placement, withdraw', {
    timeout: 120_000,
  }, async () => {
    const script = fencedBlocks(section(guide, 'Your first trainee in five minutes'), 'sh').join('\n');
    expect(script).toContain('--provider 10000001');
    expect(DEMO_PROVIDER.ukprn).toBe('10000001');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      env: { ...process.env, BASE: base, DATABASE_URL: t.database.url, LOG_LEVEL: 'silent' },
      timeout: 110_000,
    });
    const lines = stdout.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ status: 'ok' });
    const created = /^created ([1-9A-HJ-NP-Za-km-z]{24}): submitted_for_trn$/.exec(lines[1]!);
    expect(created, stdout).not.toBeNull();
    expect(lines.slice(2)).toEqual([
      '1 trainee(s)',
      'ada@example.org',
      'stale ETag: 412',
      'Hedgehog Primary School',
      '2 placement(s)',
      'withdrawn',
    ]);
    const trainee = await t.database.db
      .selectFrom('trainees')
      .select(['state', 'email'])
      .where('id', '=', created![1]!)
      .executeTakeFirstOrThrow();
    expect(trainee).toEqual({ state: 'withdrawn', email: 'ada@example.org' });
  });

  it('creates the trainee the reference shows as its postgraduate example', () => {
    const body = /<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(section(guide, 'Your first trainee in five minutes'))![1]!;
    const example = REGISTER_EXAMPLES.find((e) => e.operationId === 'CreateTrainee' && e.name === 'postgraduate')!;
    expect(JSON.parse(body)).toEqual(example.body!('v2026.1'));
  });
});

describe('Follow changes', () => {
  it('runs as written: ?since=, the feed, the live stream, and a signed webhook to a local receiver', {
    timeout: 120_000,
  }, async () => {
    const text = section(guide, 'Follow changes');
    expect(text).toContain('WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true npm start');
    const script = fencedBlocks(text, 'sh').join('\n');
    const provider = await createProviderWithToken(t.database.db, {
      ukprn: '10000077',
      name: 'Follow Changes Provider',
    });
    const work = await mkdtemp(path.join(tmpdir(), 'follow-changes-'));
    try {
      // The receiver writes webhooks.log in the current folder: a scratch one, with the project's packages.
      await symlink(path.resolve('node_modules'), path.join(work, 'node_modules'));
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: work,
        env: {
          ...process.env,
          BASE: base,
          TOKEN: provider.token,
          RECEIVER_PORT: String(await freePort()),
          LOG_LEVEL: 'silent',
        },
        timeout: 110_000,
      });
      const lines = stdout.trim().split('\n');
      expect(lines[0]).toBe('created: 201');
      expect(lines[1]).toMatch(/^1 trainee\(s\) updated since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(lines.slice(2, 4)).toEqual(['feed: trainee.created', 'event: trainee.created']);
      expect(lines[4]).toMatch(/^received trainee\.created [1-9A-HJ-NP-Za-km-z]{24} \(signature valid\)$/);
      expect(lines.slice(5)).toEqual(['succeeded']);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('the refusal of a loopback receiver names the setting for local development', async () => {
    const strict = await buildTestApp();
    try {
      const provider = await createProviderWithToken(strict.database.db, { ukprn: '10000078' });
      const response = await strict.app.inject({
        method: 'POST',
        url: '/api/v2026.1/webhooks',
        headers: { ...provider.auth, 'content-type': 'application/json' },
        payload: { data: { url: 'http://127.0.0.1:8443/register-events' } },
      });
      expect(response.statusCode).toBe(422);
      expect(JSON.stringify(response.json())).toContain('WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true');
      expect(section(guide, 'Follow changes')).toContain('WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true');
    } finally {
      await strict.close();
    }
  });
});

/** Rscript from Debian's r-base-core (installed by .ci/run with r-cran-httr2 and r-cran-jsonlite). */
const RSCRIPT = process.env.RSCRIPT_PATH ?? '/usr/bin/Rscript';
const rAvailable = existsSync(RSCRIPT);
if (!rAvailable && process.env.CI)
  throw new Error(
    `${RSCRIPT} was not found: apt-get install -y r-base-core r-cran-httr2 r-cran-jsonlite (as .ci/run does)`,
  );

describe.skipIf(!rAvailable)('From R with httr2 and jsonlite', () => {
  it('runs as written with Rscript: GET, POST and CSV give the rows the guide states, as numbers', {
    timeout: 120_000,
  }, async () => {
    const text = section(guide, 'From R with httr2 and jsonlite');
    const blocks = fencedBlocks(text, 'r');
    const code = blocks.join('\n');
    expect(code).not.toMatch(/eesyapi|install_github|remotes::/);
    expect([...code.matchAll(/library\((\w+)\)/g)].map((m) => m[1])).toEqual(['httr2', 'jsonlite']);
    const stated = (name: string) => Number(new RegExp(`nrow\\(${name}\\)\\s+# (\\d+)`).exec(text)![1]);
    // Each stated row count and the conversion, checked by R itself after the guide's lines.
    const checks = `
stopifnot(nrow(england) == ${stated('england')}, nrow(both) == ${stated('both')}, nrow(both_csv) == ${stated('both_csv')})
stopifnot(is.numeric(england$values.dP0Zw), is.numeric(both$values.IzBzg), is.numeric(both_csv$Enrolments))
stopifnot(all(both$geographicLevel %in% c("NAT", "LA")))
cat("checked", sum(both$values.dP0Zw), sum(both_csv$Enrolments), "\\n")
`;
    const { stdout } = await run(RSCRIPT, ['--vanilla', '-e', code + checks], {
      env: { ...process.env, BASE: base },
      timeout: 110_000,
    });
    expect(stdout).toMatch(/enrolments in England, 2020\/21: [\d,]+/);
    const sums = /checked (\d+) (\d+)/.exec(stdout);
    expect(sums, stdout).not.toBeNull();
    // The JSON values, converted, and the CSV's numbers agree.
    expect(Number(sums![1])).toBe(Number(sums![2]));
  });

  it('the explorer gives the same httr2 route beside eesyapi', () => {
    const input = {
      origin: 'http://127.0.0.1:3000',
      dataSetId: EXAMPLE_DATA_SET_ID,
      postUrl: `http://127.0.0.1:3000/v1/data-sets/${EXAMPLE_DATA_SET_ID}/query`,
      body: { indicators: ['dP0Zw'] },
    };
    const snippet = rHttr2Snippet(input);
    expect(snippet).toContain('library(httr2)');
    expect(snippet).not.toContain('eesyapi');
    expect(section(guide, 'From R with httr2 and jsonlite')).toContain(R_AS_ROWS);
    expect(snippet).toContain(R_AS_ROWS);
  });

  it('the explorer’s httr2 snippet runs with Rscript and answers numbers', { timeout: 60_000 }, async () => {
    const body = {
      criteria: {
        and: [{ timePeriods: { eq: { period: '2020/2021', code: 'AY' } } }, { geographicLevels: { eq: 'NAT' } }],
      },
      indicators: ['dP0Zw', 'IzBzg'],
    };
    const snippet = rHttr2Snippet({
      origin: base,
      dataSetId: EXAMPLE_DATA_SET_ID,
      postUrl: `${base}/v1/data-sets/${EXAMPLE_DATA_SET_ID}/query`,
      body,
    });
    const { stdout } = await run(
      RSCRIPT,
      ['--vanilla', '-e', `${snippet}\nstopifnot(is.numeric(data$values.dP0Zw)); cat("rows", nrow(data), "\\n")`],
      { timeout: 55_000 },
    );
    expect(stdout).toMatch(/rows 8\b/);
  });
});

describe('From R', () => {
  const text = () => section(guide, 'From R');

  it('installs eesyapi from GitHub and points it at the server with the explorer snippet’s lines', () => {
    const blocks = fencedBlocks(text(), 'r');
    expect(blocks[0]).toContain('remotes::install_github("dfe-analytical-services/eesyapi")');
    expect(blocks[1]).toContain(rUseServer('http://127.0.0.1:3000'));
  });

  it('writes time periods as eesyapi accepts them: letters and digits around one `|` (it refuses `2020/2021|AY`)', async () => {
    // eesyapi 0.4.0's validate_time_periods, which query_dataset and post_dataset run before a POST.
    const eesyapiAccepts = (period: string) => period.replace(/[a-zA-Z0-9]/g, '').length === 1;
    const readme = await readFile('README.md', 'utf8');
    const periods = [...fencedBlocks(text(), 'r'), ...fencedBlocks(readme, 'r')].flatMap((block) =>
      [...block.matchAll(/time_periods = (?:c\()?"([^"]+)"/g)].map((m) => m[1]!),
    );
    expect(periods.length).toBeGreaterThanOrEqual(3);
    expect(periods.filter((period) => !eesyapiAccepts(period))).toEqual([]);
  });

  it('the README points eesyapi at the server with the same lines', async () => {
    const readme = await readFile('README.md', 'utf8');
    expect(readme).toContain(rUseServer('http://127.0.0.1:3000'));
    expect(readme).not.toContain('deparse(body(f))');
  });

  /** The row count the guide states after `nrow(name)`. */
  const stated = (name: string) => Number(new RegExp(`nrow\\(${name}\\)\\s+# (\\d+)`).exec(text())![1]);

  const totalOf = async (query: string) =>
    (
      (await (await fetch(`${base}/api/v1.0/data-sets/${EXAMPLE_DATA_SET_ID}/query?${query}`)).json()) as {
        paging: { totalResults: number };
      }
    ).paging.totalResults;

  it('the GET query answers the rows the guide states; a national location alone, or `geographies` with GET, matches every row', async () => {
    // The URL eesyapi's get_dataset builds (api_url_query: `|` escaped in locations only, indicators joined by ", ").
    const period = 'timePeriods.in=2020|AY&';
    const indicators = 'indicators=dP0Zw%2C%20IzBzg&pageSize=10000';
    expect(await totalOf(`${period}geographicLevels.in=NAT&locations.in=NAT%7Ccode%7CE92000001&${indicators}`)).toBe(
      stated('england'),
    );
    const everyRow = await totalOf(`${period}${indicators}`);
    expect(everyRow).toBeGreaterThan(stated('both'));
    expect(await totalOf(`${period}locations.in=NAT%7Ccode%7CE92000001&${indicators}`)).toBe(everyRow);
  });

  it('the POST query answers the rows the guide states', async () => {
    // The body eesyapi's post_dataset builds from time_periods and geographies.
    const criteria = {
      and: [
        { timePeriods: { in: [{ period: '2020', code: 'AY' }] } },
        {
          or: [
            {
              and: [{ geographicLevels: { eq: 'NAT' } }, { locations: { in: [{ level: 'NAT', code: 'E92000001' }] } }],
            },
            { and: [{ geographicLevels: { eq: 'LA' } }, { locations: { in: [{ level: 'LA', code: 'E09000003' }] } }] },
          ],
        },
      ],
    };
    const response = await fetch(`${base}/api/v1.0/data-sets/${EXAMPLE_DATA_SET_ID}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ criteria, indicators: ['dP0Zw', 'IzBzg'], pageSize: 10000 }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).paging.totalResults).toBe(stated('both'));
  });
});
