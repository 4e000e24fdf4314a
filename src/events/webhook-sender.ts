/**
 * Sending one webhook request safely. The receiver's URL comes from a client, so:
 * - the host is resolved at every attempt and EVERY address it resolves to must be public (not loopback, private,
 *   link-local, unique-local, shared, multicast, reserved or a cloud metadata address); the connection then goes
 *   to that checked address (the name is not resolved a second time), so a DNS answer that changes between the
 *   check and the connect (rebinding) cannot reach an internal address;
 * - redirects are not followed (a 3xx is a failed attempt);
 * - connect and total timeouts; at most RESPONSE_BODY_LIMIT bytes of the response are read;
 * - `https` only, unless the deployment allows plain http (not production).
 * Resolving and connecting are injectable (`NetworkDeps`) so tests stub the resolver and spy on the connect step.
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import tls from 'node:tls';
import http from 'node:http';
import https from 'node:https';

/** Bytes of a receiver's response read at most (the status is what matters; the start of the body goes in the log). */
export const RESPONSE_BODY_LIMIT = 4096;

export interface NetworkDeps {
  /** Every address the name resolves to. */
  resolve(hostname: string): Promise<string[]>;
  /** Opens the connection to an address that passed the policy. */
  connect(options: { address: string; port: number; servername: string; secure: boolean }): net.Socket;
}

export const systemNetwork: NetworkDeps = {
  async resolve(hostname) {
    return (await dns.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
  },
  connect({ address, port, servername, secure }) {
    return secure
      ? tls.connect({ host: address, port, servername: net.isIP(servername) ? undefined : servername })
      : net.connect({ host: address, port });
  },
};

export interface AddressPolicy {
  /** Development and tests only: loopback and private receivers allowed (WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivate: boolean;
  /** Plain http allowed (never in production). */
  allowHttp: boolean;
}

const blocked = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  // ::/96 holds the unspecified and loopback addresses and the deprecated IPv4-compatible form (`::127.0.0.1`), which
  // some stacks still route to the IPv4 address.
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(network, prefix, 'ipv6');

/** Whether an address is one a webhook must never reach (IPv4-mapped IPv6 is judged as the IPv4 address it maps). */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return isForbiddenAddress(mapped[1]!);
    if (/^::ffff:/i.test(address)) return true;
    if (blocked.check(address, 'ipv6')) return true;
    // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits, which relays route to: judged as that address.
    const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(:|$)/i.exec(expandIpv6Head(address));
    if (sixToFour) {
      const high = parseInt(sixToFour[1]!, 16);
      const low = parseInt(sixToFour[2]!, 16);
      return isForbiddenAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
    }
    return false;
  }
  return blocked.check(address, 'ipv4');
}

/** The address with its first three groups written out (`2002:7f00::` → `2002:7f00:0:…`), for prefix matching. */
function expandIpv6Head(address: string): string {
  const [head = '', tail] = address.split('::');
  const groups = head === '' ? [] : head.split(':');
  if (tail === undefined) return address;
  const tailGroups = tail === '' ? [] : tail.split(':');
  const missing = Math.max(0, 8 - groups.length - tailGroups.length);
  return [...groups, ...Array<string>(missing).fill('0'), ...tailGroups].join(':');
}

export class WebhookTargetError extends Error {}

/** The URL's shape: absolute http(s), no credentials; https unless allowed. Throws WebhookTargetError with the reason. */
export function checkWebhookUrl(raw: string, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError(`"${raw}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new WebhookTargetError(policy.allowHttp ? 'the URL must use http or https' : 'the URL must use https');
  }
  if (url.username || url.password) throw new WebhookTargetError('the URL must not contain credentials');
  if (raw.length > 2000) throw new WebhookTargetError('the URL is longer than 2000 characters');
  return url;
}

/** The address to connect to: every resolved address must pass the policy (a literal address is checked as is). */
export async function resolveTarget(url: URL, policy: AddressPolicy, network: NetworkDeps): Promise<string> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(hostname) ? [hostname] : await network.resolve(hostname).catch(() => []);
  if (addresses.length === 0) throw new WebhookTargetError(`${hostname} does not resolve`);
  if (!policy.allowPrivate) {
    const forbidden = addresses.find(isForbiddenAddress);
    if (forbidden) {
      throw new WebhookTargetError(
        `${hostname} resolves to ${forbidden}, a private, loopback, link-local or reserved address` +
          ' (to receive webhooks on your own machine in local development, start the service with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true; never in production)',
      );
    }
  }
  return addresses[0]!;
}

export interface SendOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  policy: AddressPolicy;
  network: NetworkDeps;
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/**
 * One POST, never throwing, and settled by `totalTimeoutMs` whatever the receiver does: resolving the name, the
 * connect, the request, the answer's headers and the read of its start all count against one deadline, and when it
 * passes the socket is destroyed directly (not through the request, which a 101 upgrade, an endless 1xx, trickled
 * headers or a half-close can leave in a state where destroying it does nothing) and the attempt is a failure.
 * 2xx is success; anything else (3xx and 1xx-only answers included) is a failed attempt with its reason.
 */
export async function sendWebhook(options: SendOptions): Promise<SendResult> {
  let socket: net.Socket | undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<SendResult>((resolve) => {
    timer = setTimeout(() => {
      socket?.destroy();
      resolve({ ok: false, status: null, error: `no complete answer within ${options.totalTimeoutMs} ms` });
    }, options.totalTimeoutMs);
  });
  try {
    return await Promise.race([attempt(options, (opened) => (socket = opened)), deadline]);
  } finally {
    clearTimeout(timer);
    // Whatever the outcome, nothing of the attempt stays open.
    socket?.destroy();
  }
}

async function attempt(options: SendOptions, opened: (socket: net.Socket) => void): Promise<SendResult> {
  let url: URL;
  let address: string;
  try {
    url = checkWebhookUrl(options.url, options.policy);
    address = await resolveTarget(url, options.policy, options.network);
  } catch (error) {
    return { ok: false, status: null, error: (error as Error).message };
  }
  const secure = url.protocol === 'https:';
  const port = Number(url.port || (secure ? 443 : 80));
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const request = (secure ? https : http).request({
      method: 'POST',
      hostname: url.hostname,
      port,
      path: `${url.pathname}${url.search}`,
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(options.body),
        'user-agent': 'education-api-webhooks/1',
        connection: 'close',
      },
      // No agent: with one, Node would open its own connection (resolving the name again) and ignore this.
      agent: undefined,
      createConnection: () => {
        const socket = options.network.connect({
          address,
          port,
          servername: url.hostname.replace(/^\[|\]$/g, ''),
          secure,
        });
        opened(socket);
        socket.setTimeout(options.connectTimeoutMs, () => {
          if (socket.connecting) socket.destroy(new Error(`no connection within ${options.connectTimeoutMs} ms`));
        });
        socket.once('connect', () => socket.setTimeout(0));
        return socket;
      },
    });
    request.on('error', (error) => finish({ ok: false, status: null, error: error.message }));
    // Node drops an upgrade nobody handles without an error or a close on the request: settled here.
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      finish({
        ok: false,
        status: response.statusCode ?? 101,
        error: `HTTP ${response.statusCode ?? 101}: the receiver switched protocols instead of answering`,
      });
    });
    let answered = false;
    // Closed with no status: a failure now. After a status, the response's own events settle it.
    request.on(
      'close',
      () => answered || finish({ ok: false, status: null, error: 'the connection closed before an answer' }),
    );
    request.on('response', (response) => {
      answered = true;
      const status = response.statusCode ?? 0;
      let read = 0;
      const chunks: Buffer[] = [];
      const done = () => {
        const text = Buffer.concat(chunks).toString('utf8').slice(0, 200);
        if (status >= 200 && status < 300) finish({ ok: true, status, error: null });
        else if (status >= 300 && status < 400)
          finish({ ok: false, status, error: `redirect to ${response.headers.location ?? '(none)'} not followed` });
        else finish({ ok: false, status, error: `HTTP ${status}${text ? `: ${text}` : ''}` });
      };
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (chunks.length < 4 && read <= RESPONSE_BODY_LIMIT) chunks.push(chunk);
        if (read > RESPONSE_BODY_LIMIT) {
          // Enough: the rest is not read.
          done();
          response.destroy();
        }
      });
      // The status is the answer: a body cut off after it (the receiver closing mid-body) does not change it.
      response.on('end', done);
      response.on('close', done);
      response.on('error', () => done());
    });
    request.end(options.body);
  });
}
