/**
 * Load at a fixed rate, for the bench's latency figures: requests start on a schedule evenly spaced in
 * time, and each latency counts from the request's scheduled start, so a stall of the server shows in
 * the figures instead of merely delaying the requests behind it (no coordinated omission).
 * autocannon's rate option sends each connection's quota for a second in one burst at the start of
 * the second, which measures latency under full load, not at the rate asked for.
 *
 * With several URLs the schedule goes to each in turn for a slice of `sliceMs`, so that a stall of this
 * busy machine (tens of milliseconds, decisive for a p99) falls on either side alike instead of on
 * whichever ran alone at the time. A request scheduled in the first `settleMs` of a slice is sent but
 * not counted: the previous slice's last answers may still be on their way.
 *
 * Usage: tsx scripts/pacedLoad.ts <requests per second> <seconds> <slice ms> <url> [<url> …] [-- header=value …]
 * Prints one JSON array, a result per URL; the first second warms the connections up and is not counted.
 */
import http from 'node:http';

const [rateText, secondsText, sliceText, ...rest] = process.argv.slice(2);
const separator = rest.indexOf('--');
const urls = separator === -1 ? rest : rest.slice(0, separator);
const headerArguments = separator === -1 ? [] : rest.slice(separator + 1);
const rate = Number(rateText);
const seconds = Number(secondsText);
const sliceMs = Number(sliceText);
if (!(rate > 0) || !(seconds > 1) || !(sliceMs > 0) || urls.length === 0) {
  console.error('usage: tsx scripts/pacedLoad.ts <requests per second> <seconds, more than 1> <slice ms> <url> [<url> …] [-- header=value …]');
  process.exit(2);
}
const headers = Object.fromEntries(headerArguments.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const warmUpMs = 1_000;
const settleMs = Math.min(20, sliceMs / 10);
const total = Math.round(rate * seconds);

const targets = urls.map((url) => ({ url: new URL(url), latencies: [] as number[], non2xx: 0, errors: 0 }));
let sent = 0;
let inFlight = 0;
const started = performance.now();

function finish(target: (typeof targets)[number], scheduled: number, status: number | undefined) {
  inFlight -= 1;
  const since = scheduled - started;
  if (since >= warmUpMs && since % sliceMs >= settleMs) {
    target.latencies.push(performance.now() - scheduled);
    if (status === undefined) target.errors += 1;
    else if (status < 200 || status >= 300) target.non2xx += 1;
  }
  if (sent === total && inFlight === 0) report();
}

function send(scheduled: number) {
  const target = targets[Math.floor((scheduled - started) / sliceMs) % targets.length]!;
  inFlight += 1;
  const { hostname, port, pathname, search } = target.url;
  const request = http.request({ host: hostname, port, path: `${pathname}${search}`, headers, agent }, (response) => {
    response.resume();
    response.on('end', () => finish(target, scheduled, response.statusCode));
  });
  request.on('error', () => finish(target, scheduled, undefined));
  request.end();
}

const ticker = setInterval(() => {
  const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000));
  while (sent < due) {
    send(started + (sent * 1000) / rate);
    sent += 1;
  }
  if (sent === total) clearInterval(ticker);
}, 1);

function report() {
  const measuredSeconds = ((seconds * 1000 - warmUpMs) / 1000) * (1 - settleMs / sliceMs) / targets.length;
  const results = targets.map(({ latencies, non2xx, errors }) => {
    latencies.sort((a, b) => a - b);
    const quantile = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(1));
    return {
      requestsPerSecond: latencies.length / measuredSeconds,
      p50: quantile(0.5),
      p90: quantile(0.9),
      p99: quantile(0.99),
      max: quantile(1),
      mean: latencies.reduce((sum, latency) => sum + latency, 0) / Math.max(1, latencies.length),
      non2xx,
      errors,
      count: latencies.length,
    };
  });
  console.log(JSON.stringify(results));
  agent.destroy();
}
