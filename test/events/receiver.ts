/** A real webhook receiver on 127.0.0.1 for tests: records every request; its behaviour can be switched. */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { NetworkDeps } from '../../src/events/webhook-sender.js';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  json: any;
}

export type Behaviour = 'ok' | 'fail' | 'hang' | { redirect: string };

export async function startReceiver() {
  const received: Received[] = [];
  let behaviour: Behaviour = 'ok';
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const done = () => (inFlight -= 1);
      const current = behaviour;
      if (current === 'hang') {
        res.on('close', done);
        return;
      }
      if (current === 'ok') {
        received.push({
          id: String(req.headers['webhook-id']),
          timestamp: String(req.headers['webhook-timestamp']),
          signature: String(req.headers['webhook-signature']),
          body,
          json: JSON.parse(body),
        });
      }
      done();
      if (typeof current === 'object') res.writeHead(302, { location: current.redirect }).end();
      else if (current === 'fail') res.writeHead(500).end('x'.repeat(100_000));
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    get maxInFlight() {
      return maxInFlight;
    },
    set(next: Behaviour) {
      behaviour = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A network for tests: names resolve from `names` only (nothing reaches DNS), and every connect is recorded and must
 * go to 127.0.0.0/8 — anything else fails the test instead of leaving the machine.
 */
export function loopbackNetwork(names: Record<string, string[]> = {}) {
  const connects: string[] = [];
  const network: NetworkDeps = {
    async resolve(hostname) {
      return names[hostname] ?? [];
    },
    connect({ address, port }) {
      connects.push(address);
      if (!/^127\./.test(address)) throw new Error(`test tried to connect to ${address}`);
      return net.connect({ host: address, port });
    },
  };
  return { network, connects };
}
