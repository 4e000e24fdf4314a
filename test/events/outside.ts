/**
 * The checks made from outside after each hostile scenario: the service still does its job for someone else. Another
 * provider's webhook arrives within 5 s of its event, a new live stream opens, and a query CSV export is answered.
 */
import http from 'node:http';
import net from 'node:net';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { validTrainee, type TestProvider } from '../register/helpers.js';
import type { startReceiver } from './receiver.js';

export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function registerCall(
  t: TestApp,
  p: TestProvider,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  data?: unknown,
) {
  return t.app.inject({
    method,
    url: `/api/v2026.1${path}`,
    headers: { ...p.auth, ...(data === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: data === undefined ? undefined : JSON.stringify({ data }),
  });
}

export async function createTrainee(t: TestApp, p: TestProvider, name: string): Promise<string> {
  const res = await registerCall(
    t,
    p,
    'POST',
    '/trainees',
    validTrainee({ first_names: name, last_name: `Doe-${name}`, email: `${name}@example.com` }),
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.trainee_id;
}

/** The status line of a GET on a real connection (then hung up): streams and exports answer 200 before their body ends. */
export function statusOf(base: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${path}`, { headers }, (response) => {
      resolve(response.statusCode ?? 0);
      request.destroy();
    });
    request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
  });
}

/** A GET sent on a raw connection; `hangUp()` closes it and resolves once it is closed. */
export function rawRequest(base: string, path: string, headers: Record<string, string>) {
  const url = new URL(`${base}${path}`);
  const socket = net.connect(Number(url.port), url.hostname, () => {
    const lines = [
      `GET ${url.pathname}${url.search} HTTP/1.1`,
      `Host: ${url.host}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    connected,
    get received() {
      return received;
    },
    hangUp() {
      socket.destroy();
      return closed;
    },
  };
}

/** A request whose client hangs up `afterMs` after sending it (0: at once, before any answer can start). */
export async function hangUpAfter(
  base: string,
  path: string,
  headers: Record<string, string>,
  afterMs: number,
): Promise<void> {
  const request = rawRequest(base, path, headers);
  await request.connected;
  if (afterMs > 0) await new Promise((r) => setTimeout(r, afterMs));
  await request.hangUp();
}

export interface Bystander {
  provider: TestProvider;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
}

/** Another provider's webhook within 5 s, a new live stream (statistics and register) and a CSV export accepted. */
export async function expectServiceAnswersOthers(t: TestApp, base: string, bystander: Bystander): Promise<void> {
  const before = bystander.receiver.received.length;
  const started = Date.now();
  await createTrainee(t, bystander.provider, `bystander${Date.now()}`);
  await until(() => bystander.receiver.received.length > before, 5000, "another provider's webhook within 5 s");
  expect(Date.now() - started).toBeLessThan(5000);
  expect(await statusOf(base, '/v1/events', { accept: 'text/event-stream' })).toBe(200);
  expect(await statusOf(base, '/api/v2026.1/events', { ...bystander.provider.auth, accept: 'text/event-stream' })).toBe(
    200,
  );
  expect(
    await statusOf(base, `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?geographicLevels.eq=NAT`, {
      accept: 'text/csv',
    }),
  ).toBe(200);
}
