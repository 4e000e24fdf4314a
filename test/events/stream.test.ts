import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';

let t: TestApp;
let provider: TestProvider;
let other: TestProvider;
let base: string;

beforeAll(async () => {
  t = await buildTestApp({
    RATE_LIMIT_REGISTER_MAX: '100000',
    EVENTS_HEARTBEAT_MS: '200',
    EVENTS_STREAM_MAX_PER_CLIENT: '2',
    EVENTS_POLL_MS: '60000',
  });
  provider = await createProviderWithToken(t.database.db);
  other = await createProviderWithToken(t.database.db);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
});

interface SseMessage {
  id?: string;
  event?: string;
  data?: any;
  comment?: string;
}

/** An open event stream: parsed messages as they arrive. */
function openStream(path: string, headers: Record<string, string> = {}) {
  const messages: SseMessage[] = [];
  let status = 0;
  let contentType = '';
  let buffer = '';
  let request!: http.ClientRequest;
  const opened = new Promise<void>((resolve, reject) => {
    request = http.get(`${base}${path}`, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      status = res.statusCode ?? 0;
      contentType = String(res.headers['content-type']);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: SseMessage = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) message.comment = line.slice(1).trim();
            else if (line.startsWith('id: ')) message.id = line.slice(4);
            else if (line.startsWith('event: ')) message.event = line.slice(7);
            else if (line.startsWith('data: ')) message.data = JSON.parse(line.slice(6));
          }
          messages.push(message);
        }
      });
      res.on('error', () => {});
      resolve();
    });
    request.on('error', reject);
  });
  return {
    opened,
    messages,
    events: () => messages.filter((m) => m.event),
    get status() {
      return status;
    },
    get contentType() {
      return contentType;
    },
    close: () => request.destroy(),
    async waitFor(count: number, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.filter((m) => m.event).length < count) {
        if (Date.now() > deadline)
          throw new Error(`only ${messages.filter((m) => m.event).length} of ${count} events arrived`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

async function createTrainee(p: TestProvider, name: string): Promise<string> {
  const res = await fetch(`${base}/api/v2026.1/trainees`, {
    method: 'POST',
    headers: { ...p.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ data: validTrainee({ first_names: name, email: `${name}@example.com` }) }),
  });
  expect(res.status).toBe(201);
  return (await res.json()).data.trainee_id;
}

describe('the live stream', () => {
  it('delivers new events as they commit (woken by NOTIFY), only the provider’s own, and resumes with Last-Event-ID', async () => {
    const stream = openStream('/api/v2026.1/events', provider.auth);
    await stream.opened;
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const first = await createTrainee(provider, 'first');
    await createTrainee(other, 'others');
    const second = await createTrainee(provider, 'second');
    // Polling is off (60 s): only the sequencer's notification can have woken the stream this fast.
    await stream.waitFor(2, 5000);
    expect(stream.events().map((m) => [m.event, m.data.resource.id])).toEqual([
      ['trainee.created', first],
      ['trainee.created', second],
    ]);
    expect(stream.events()[0]!.id).toBe(stream.events()[0]!.data.cursor);
    stream.close();

    // Missed while disconnected: a reconnect with the last id it saw gets them, in order, then live ones.
    const missed = await createTrainee(provider, 'missed');
    const resumed = openStream('/api/v2026.1/events', { ...provider.auth, 'last-event-id': stream.events()[1]!.id! });
    await resumed.opened;
    await resumed.waitFor(1);
    const live = await createTrainee(provider, 'live');
    await resumed.waitFor(2);
    expect(resumed.events().map((m) => m.data.resource.id)).toEqual([missed, live]);
    resumed.close();
  });

  it('sends heartbeats while idle and serves the public statistics stream without a token', async () => {
    const stream = openStream('/v1/events');
    await stream.opened;
    expect(stream.status).toBe(200);
    await new Promise((r) => setTimeout(r, 700));
    expect(stream.messages.filter((m) => m.comment === 'heartbeat').length).toBeGreaterThanOrEqual(2);
    stream.close();
  });

  it('counts streams against the per-client limit (429 beyond it) and frees the slot when a stream ends', async () => {
    const a = openStream('/api/v2026.1/events', other.auth);
    const b = openStream('/api/v2026.1/events', other.auth);
    await Promise.all([a.opened, b.opened]);
    const refused = await fetch(`${base}/api/v2026.1/events`, {
      headers: { ...other.auth, accept: 'text/event-stream' },
    });
    expect(refused.status).toBe(429);
    // Another provider is another client.
    const mine = openStream('/api/v2026.1/events', provider.auth);
    await mine.opened;
    expect(mine.status).toBe(200);
    a.close();
    await new Promise((r) => setTimeout(r, 200));
    const again = openStream('/api/v2026.1/events', other.auth);
    await again.opened;
    expect(again.status).toBe(200);
    for (const s of [b, mine, again]) s.close();
  });

  it('refuses a bad Last-Event-ID with 400 before streaming', async () => {
    const res = await fetch(`${base}/api/v2026.1/events`, {
      headers: { ...provider.auth, accept: 'text/event-stream', 'last-event-id': 'bogus' },
    });
    expect(res.status).toBe(400);
  });
});
