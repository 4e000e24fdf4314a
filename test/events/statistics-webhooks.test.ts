import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runWebhooksCommand } from '../../src/cli/stats-webhooks.js';
import { webhookSettings } from '../../src/events/webhooks.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDataSet, importFixtureVersion } from '../helpers/statistics.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';
import { loopbackNetwork, startReceiver, type Received } from './receiver.js';

const run = promisify(execFile);

const FAST = {
  RATE_LIMIT_REGISTER_MAX: '100000',
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_RETRY_MAX_MS: '200',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '500',
  WEBHOOK_CONNECT_TIMEOUT_MS: '300',
};

let t: TestApp;
let provider: TestProvider;
const { network, connects } = loopbackNetwork();

beforeAll(async () => {
  t = await buildTestApp(FAST, { webhookNetwork: network });
  provider = await createProviderWithToken(t.database.db);
});
afterAll(async () => {
  await t?.close();
});

async function until(check: () => boolean, timeoutMs = 20_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `npm run stats-admin -- webhooks <args>` against this file's database, as a separate process. */
async function cli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const processEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: t.database.url,
    REGISTER_ENVIRONMENT: 'sandbox',
    LOG_LEVEL: 'silent',
  };
  // Private receivers only when the test says so.
  delete processEnv.WEBHOOK_ALLOW_PRIVATE_ADDRESSES;
  Object.assign(processEnv, env);
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli/stats-admin.ts', 'webhooks', ...args],
      { env: processEnv },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The same commands in process (fast), with their printed lines; a refused command rejects with its message. */
async function command(...args: string[]): Promise<string[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    await runWebhooksCommand(args, t.database.db, webhookSettings(t.config, network));
  } finally {
    spy.mockRestore();
  }
  return lines;
}

function verify(secret: string, r: Received) {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.id,
    'webhook-timestamp': r.timestamp,
    'webhook-signature': r.signature,
  });
}

describe('statistics webhook subscriptions (npm run stats-admin -- webhooks)', () => {
  it('added by the command, receive signed statistics events only (of their data set), can be redelivered and rotated, and get nothing once removed', async () => {
    const receiver = await startReceiver();
    const filtered = await startReceiver();
    const providerReceiver = await startReceiver();
    try {
      const first = await createDataSet(t.database.db, { title: 'Followed' });
      const second = await createDataSet(t.database.db, { title: 'Other' });

      const added = await cli(
        { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' },
        'add',
        '--url',
        receiver.url,
        '--types',
        'data_set.created,data_set_version.published',
      );
      expect(added.code, added.stderr).toBe(0);
      const id = /subscription ([0-9a-f-]{36})/.exec(added.stdout)![1]!;
      const secret = added.stdout.trim().split('\n').at(-1)!;
      expect(secret).toMatch(/^whsec_/);
      const other = await command('add', '--url', filtered.url, '--data-set', first);
      const otherId = /subscription ([0-9a-f-]{36})/.exec(other[0]!)![1]!;
      const otherSecret = other.at(-1)!;
      const list = await command('list');
      expect(list).toEqual([
        [id, 'enabled', receiver.url, 'data_set.created,data_set_version.published', 'every data set'].join('\t'),
        [otherId, 'enabled', filtered.url, 'all types', first].join('\t'),
      ]);
      expect(list.join('\n')).not.toContain('whsec_');
      // A provider's subscription on the same instance.
      const providerSub = await t.app.inject({
        method: 'POST',
        url: '/api/v2026.1/webhooks',
        headers: { ...provider.auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ data: { url: providerReceiver.url } }),
      });
      expect(providerSub.statusCode, providerSub.body).toBe(201);

      await importFixtureVersion(t.database, { dataSetId: first, version: '1.0' });
      const trainee = await t.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: { ...provider.auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ data: validTrainee({ first_names: 'Stat', email: 'stat@example.com' }) }),
      });
      expect(trainee.statusCode, trainee.body).toBe(201);
      await importFixtureVersion(t.database, { dataSetId: second, version: '1.0' });

      await until(
        () => receiver.received.length >= 4 && filtered.received.length >= 2 && providerReceiver.received.length >= 1,
        30_000,
        'deliveries',
      );
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.map((r) => [r.json.type, r.json.data.dataSetId])).toEqual([
        ['data_set.created', first],
        ['data_set_version.published', first],
        ['data_set.created', second],
        ['data_set_version.published', second],
      ]);
      for (const r of receiver.received) {
        expect(r.id).toBe(r.json.id);
        expect(verify(secret, r)).toEqual(r.json);
      }
      expect(receiver.received[1]!.json).toMatchObject({
        resource: { type: 'data_set_version', id: `${first}@1.0`, dataSetId: first },
        data: {
          version: { number: '1.0', status: 'Published' },
          links: { csv: { href: `/v1/data-sets/${first}/csv?dataSetVersion=1.0`, method: 'GET' } },
        },
      });
      // --data-set: that data set's events only; the provider's receiver: its register events only.
      expect(filtered.received.map((r) => [r.json.type, r.json.data.dataSetId])).toEqual([
        ['data_set.created', first],
        ['data_set_version.published', first],
      ]);
      expect(providerReceiver.received.map((r) => r.json.type)).toEqual(['trainee.created']);

      // The delivery log, and a redelivery with the same webhook-id.
      const log = await command('deliveries', id);
      expect(log).toHaveLength(4);
      const [deliveryId, status, type, eventId] = log.at(-1)!.split('\t');
      expect([status, type, eventId]).toEqual(['succeeded', 'data_set.created', receiver.received[0]!.id]);
      expect(await command('redeliver', deliveryId!)).toEqual([
        `Delivery ${deliveryId} of subscription ${id} is queued again.`,
      ]);
      await until(() => receiver.received.length === 5, 20_000, 'redelivery');
      expect(receiver.received[4]!.id).toBe(receiver.received[0]!.id);
      expect(verify(secret, receiver.received[4]!)).toEqual(receiver.received[0]!.json);

      // Rotation: the new secret, and the old one during the overlap, both verify what follows.
      const rotated = await command('rotate-secret', otherId);
      const newSecret = rotated.at(-1)!;
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(otherSecret);

      // Removed: nothing more to it, while the other subscription still receives.
      expect(await command('remove', id)).toEqual([
        `Removed statistics webhook subscription ${id}: nothing more is delivered to it.`,
      ]);
      await importFixtureVersion(t.database, { dataSetId: first, version: '1.1' });
      await until(() => filtered.received.length === 3, 20_000, 'delivery after removal');
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.received).toHaveLength(5);
      const last = filtered.received[2]!;
      expect(last.json).toMatchObject({ type: 'data_set_version.published', data: { version: { number: '1.1' } } });
      expect(verify(newSecret, last)).toEqual(last.json);
      expect(verify(otherSecret, last)).toEqual(last.json);
      await expect(command('deliveries', id)).rejects.toThrow('Webhook subscription not found');
      expect(connects.every((a) => a === '127.0.0.1')).toBe(true);
    } finally {
      await receiver.close();
      await filtered.close();
      await providerReceiver.close();
    }
  }, 120_000);

  it('refuses an internal address at add time (exit 1, a clear message, nothing stored), and unknown types and data sets', async () => {
    const refused = await cli({}, 'add', '--url', 'https://10.0.0.1/hook');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'Error: url: 10.0.0.1 resolves to 10.0.0.1, a private, loopback, link-local or reserved address',
    );
    const metadata = await cli({}, 'add', '--url', 'https://169.254.169.254/latest');
    expect(metadata.code).toBe(1);
    expect(metadata.stderr).toContain('169.254.169.254');
    expect((await command('list')).join('\n')).not.toMatch(/10\.0\.0\.1|169\.254/);
    await expect(command('add', '--url', 'http://127.0.0.1:9/hook', '--types', 'trainee.created')).rejects.toThrow(
      /unknown "trainee.created"; the types are data_set.created/,
    );
    await expect(
      command('add', '--url', 'http://127.0.0.1:9/hook', '--data-set', '00000000-0000-4000-8000-000000000000'),
    ).rejects.toThrow('no data set with this id');
    await expect(command('add')).rejects.toThrow('--url required.');
    await expect(command('redeliver', '999999')).rejects.toThrow('Delivery 999999 not found');
  }, 60_000);
});
